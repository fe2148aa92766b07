import { randomBytes } from 'node:crypto';
import { constants, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { CREATE_EXCLUSIVE, type FileSystem, StorageError, writeFully } from '../files/file-system';
import { SNAPSHOT_PREFIX, SNAPSHOT_SUFFIX } from './data-format';

/** fsync of the directory makes a rename or a new file's name durable. */
export async function syncDirectory(files: FileSystem, path: string): Promise<void> {
  const directory = files.openSync(dirname(path), constants.O_RDONLY);
  try {
    await files.fsync(directory);
  } finally {
    files.closeSync(directory);
  }
}

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

/**
 * Writes `body` as the snapshot at `path`: a new temporary file of unpredictable name created
 * exclusively (a symlink planted in the directory is never followed), written whole and fsynced, then
 * renamed into place. On any failure the temporary file is removed and `path` is left as it was.
 */
export async function replaceSnapshot(files: FileSystem, path: string, body: Buffer): Promise<void> {
  const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(8).toString('hex')}.tmp`);
  let fd: number | undefined;
  try {
    fd = files.openSync(temporary, CREATE_EXCLUSIVE, permissionsOf(path));
    writeFully(files, fd, SNAPSHOT_PREFIX);
    writeFully(files, fd, body);
    writeFully(files, fd, SNAPSHOT_SUFFIX);
    await files.fsync(fd);
    files.closeSync(fd);
    fd = undefined;
    files.renameSync(temporary, path);
  } catch (error) {
    if (fd !== undefined) closeQuietly(files, fd);
    try {
      files.unlinkSync(temporary);
    } catch {
      // Never created, or already renamed: nothing of it is left.
    }
    throw new StorageError(`cannot write a new snapshot of ${path}`, error);
  }
  try {
    await syncDirectory(files, path);
  } catch (error) {
    throw new StorageError(`cannot make the new snapshot of ${path} durable`, error);
  }
}
