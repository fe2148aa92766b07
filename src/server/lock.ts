import { hostname } from 'node:os';
import { describeFileSystemError, type FileSystem } from '../files/file-system';
import { tryLock } from '../files/lock';
import { ServeError } from './errors';

/**
 * Claims the data file at `path` (already resolved to the real file) for this process with `FILE.lock`.
 * A lock left by a serve that died is taken over, even when its pid now belongs to another process; one
 * held by a live serve refuses the start.
 */
export async function lockDataFile(path: string, files?: FileSystem): Promise<() => Promise<void>> {
  const lockPath = `${path}.lock`;
  let attempt: ReturnType<typeof tryLock>;
  try {
    attempt = tryLock(lockPath, { files });
  } catch (error) {
    throw new ServeError(`cannot lock data file ${path} (${lockPath}): ${describeFileSystemError(error)}`);
  }
  if (attempt.acquired) {
    const { release } = attempt;
    return async () => release();
  }
  const holder = attempt.heldBy;
  if (holder?.host && holder.host !== hostname()) {
    // Its liveness cannot be checked from here; a container restarted under a new host name looks the same.
    throw new ServeError(
      `data file ${path} is in use by another petinv serve (pid ${holder.pid} on host ${holder.host}); stop it, or, if that serve is gone, remove ${lockPath}`,
    );
  }
  const owner = holder ? ` (pid ${holder.pid})` : '';
  throw new ServeError(
    `data file ${path} is in use by another petinv serve${owner}; stop it or choose another file with --data`,
  );
}
