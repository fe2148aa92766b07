import { lstatSync, readdirSync, statSync, unlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { syncDirectory, writeFileAtomic } from '../files/atomic-write';
import { type FileSystem, StorageError } from '../files/file-system';
import { SNAPSHOT_PREFIX, SNAPSHOT_SUFFIX } from './data-format';

export { syncDirectory } from '../files/atomic-write';

/** The permission bits of the snapshot being replaced: a new one never widens what the operator set. */
export function permissionsOf(path: string): number {
  try {
    return statSync(path).mode & 0o777;
  } catch {
    return 0o644; // The first snapshot: the usual mode, narrowed by the umask.
  }
}

export function closeQuietly(files: FileSystem, fd: number): void {
  try {
    files.closeSync(fd);
  } catch {
    // Closing after a failed write: the failure that matters is already being reported.
  }
}

/** The name of a snapshot being written: beside the data file, hidden, with 16 random hex digits. */
const temporaryName = (path: string, random: string) => `.${basename(path)}.${random}.tmp`;

/**
 * Removes the temporary files of snapshots that a serve killed while writing them left beside `path`
 * (each as large as the inventory: repeated crashes would fill the disk). Only regular files of this
 * process's user with the exact name a snapshot gets; the data file is locked, so no serve writes one now.
 */
export function removeAbandonedSnapshots(path: string): void {
  const directory = dirname(path);
  const prefix = temporaryName(path, '').slice(0, -'.tmp'.length);
  const random = /^[0-9a-f]{16}\.tmp$/;
  let names: string[];
  try {
    names = readdirSync(directory);
  } catch {
    return; // The load that follows reports a directory it cannot read.
  }
  for (const name of names) {
    if (!name.startsWith(prefix) || !random.test(name.slice(prefix.length))) continue;
    const candidate = join(directory, name);
    try {
      const stat = lstatSync(candidate);
      if (stat.isFile() && stat.uid === process.getuid?.()) unlinkSync(candidate);
    } catch {
      // Gone already, or not ours to remove: it stays.
    }
  }
}

/**
 * Writes `body` as the snapshot at `path`, through the one atomic writer (files/atomic-write.ts): a new
 * temporary file of unpredictable name created exclusively (a symlink planted in the directory is never
 * followed), written whole and fsynced, then renamed into place. On any failure the temporary file is
 * removed and `path` is left as it was.
 */
export async function replaceSnapshot(files: FileSystem, path: string, body: Buffer): Promise<void> {
  try {
    await writeFileAtomic(path, [SNAPSHOT_PREFIX, body, SNAPSHOT_SUFFIX], {
      files,
      mode: permissionsOf(path),
      temporaryName: (random) => temporaryName(path, random),
      fsync: true,
    });
  } catch (error) {
    throw new StorageError(`cannot write a new snapshot of ${path}`, error);
  }
  try {
    await syncDirectory(files, path);
  } catch (error) {
    throw new StorageError(`cannot make the new snapshot of ${path} durable`, error);
  }
}
