import { closeSync, fstatSync, lstatSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import {
  describeFileSystemError,
  type FileSystem,
  nodeFileSystem,
  READ_NO_FOLLOW,
  tryOr,
} from '../files/file-system';
import { ServeError } from './errors';

/**
 * The real file behind `path`: a data file reached through a symlink, or by another path, is one file,
 * locked once and written through to its target rather than replaced by a regular file.
 */
export function resolveDataPath(path: string): string {
  const absolute = resolve(path);
  let isLink: boolean;
  try {
    isLink = lstatSync(absolute).isSymbolicLink();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new ServeError(`cannot use data file ${path}: ${describeFileSystemError(error)}`);
    // Its directory does not exist yet; it is created, so nothing to resolve.
    return tryOr(() => join(realpathSync(dirname(absolute)), basename(absolute)), absolute);
  }
  let real: string;
  try {
    real = realpathSync(absolute);
  } catch {
    const target = isLink ? readlinkSync(absolute) : absolute;
    throw new ServeError(
      `data file ${path} is a symbolic link to ${target}, which does not exist; point it at a file or give --data another path`,
    );
  }
  const stat = lstatSync(real);
  if (!stat.isFile())
    throw new ServeError(`data file ${path} is not a regular file; give --data a file path`);
  // No name reaches it, and no serve claims its identity any more: out of date (see the message).
  if (stat.nlink === 0)
    throw new ServeError(
      `data file ${path} is in no directory any more: it was replaced (serve writes each snapshot as a new file) after it was bind-mounted here on its own, and the mount still shows the old file, which is out of date; bind-mount the data file's directory instead`,
    );
  return real;
}

/** Reads a file without following a symlink planted at its name; undefined when there is none. */
export function readNoFollow(path: string, what: string): Buffer | undefined {
  let fd: number;
  try {
    fd = nodeFileSystem.openSync(path, READ_NO_FOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ServeError(`cannot read ${what} ${path}: ${describeFileSystemError(error)}`);
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new ServeError(`${what} ${path} is not a regular file`);
    try {
      return readFileSync(fd);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ERR_FS_FILE_TOO_LARGE') throw error;
      throw new ServeError(
        `${what} ${path} is too large to read (${stats.size} bytes); it was left as it is`,
      );
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * The data file's directory, created when missing, for this user alone (0700, whatever the umask: the
 * inventory and its journal are nobody else's to read); a failure is one line naming it.
 */
export function createDataDirectory(path: string, files: FileSystem = nodeFileSystem): void {
  try {
    files.mkdirSync(dirname(path), 0o700);
  } catch (error) {
    throw new ServeError(
      `cannot create the directory of data file ${path}: ${describeFileSystemError(error)}`,
    );
  }
}
/** `bytes` as text; a file too large for one JavaScript string is a one-line error, not a crash. */
export function decodeText(bytes: Buffer, end: number, what: string, path: string): string {
  try {
    return bytes.toString('utf8', 0, end);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ERR_STRING_TOO_LONG') throw error;
    throw new ServeError(`${what} ${path} is too large to read (${end} bytes); it was left as it is`);
  }
}
