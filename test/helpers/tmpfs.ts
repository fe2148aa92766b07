import { execFileSync } from 'node:child_process';
import { temporaryDirectory } from './serve';

/**
 * A tmpfs of its own for a test that needs a real file system's limits (a full disk, read-only), mounted
 * on a temporary directory; undefined where the machine does not allow it (not root, no mount), so the
 * test skips. The caller unmounts it (`umount -l`) when done.
 */
export function mountTmpfs(options: string): string | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const directory = temporaryDirectory('petinv-tmpfs-');
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', directory], { stdio: 'ignore' });
    return directory;
  } catch {
    return undefined;
  }
}
