import {
  chmodSync,
  closeSync,
  constants,
  existsSync,
  fstatSync,
  fsync,
  fsyncSync,
  ftruncateSync,
  linkSync,
  mkdirSync,
  openSync,
  renameSync,
  type Stats,
  statSync,
  unlinkSync,
  write,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { promisify } from 'node:util';

/**
 * Every call that changes the disk, in one injectable layer: tests hand in one that fails with ENOSPC,
 * writes short or fails its syncs, and prove that nothing acknowledged is lost.
 */
export interface FileSystem {
  openSync(path: string, flags: number, mode?: number): number;
  /** Writes at most `length` bytes of `buffer` from `offset` (at `position`, else where the file is); may write fewer. */
  writeSync(fd: number, buffer: Uint8Array, offset: number, length: number, position?: number): number;
  /** writeSync in the thread pool: the main thread goes on while the kernel writes. */
  write(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): Promise<number>;
  fsync(fd: number): Promise<void>;
  fsyncSync(fd: number): void;
  ftruncateSync(fd: number, length: number): void;
  closeSync(fd: number): void;
  renameSync(from: string, to: string): void;
  linkSync(existing: string, newPath: string): void;
  unlinkSync(path: string): void;
  /** mkdir -p; each directory it creates gets `mode` exactly, whatever the umask. */
  mkdirSync(path: string, mode?: number): void;
}

const writeAsync = promisify(write);

export const nodeFileSystem: FileSystem = {
  openSync: (path, flags, mode) => openSync(path, flags, mode),
  writeSync: (fd, buffer, offset, length, position) => writeSync(fd, buffer, offset, length, position),
  write: async (fd, buffer, offset, length, position) =>
    (await writeAsync(fd, buffer, offset, length, position)).bytesWritten,
  fsync: promisify(fsync),
  fsyncSync: (fd) => fsyncSync(fd),
  ftruncateSync: (fd, length) => ftruncateSync(fd, length),
  closeSync: (fd) => closeSync(fd),
  renameSync: (from, to) => renameSync(from, to),
  linkSync: (existing, newPath) => linkSync(existing, newPath),
  unlinkSync: (path) => unlinkSync(path),
  mkdirSync: (path, mode) => makeDirectories(path, mode),
};

/**
 * mkdir -p, one level at a time: Node's recursive mkdirSync (20 to 24) never returns when a directory
 * cannot be made in a parent that exists (ENOENT under /proc, say). Each directory it creates gets `mode`
 * exactly (chmod after the umask narrowed it); one that was there already is left as it is.
 */
export function makeDirectories(path: string, mode?: number): void {
  try {
    mkdirSync(path, { mode });
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    if (code === 'EEXIST' && statSync(path).isDirectory()) return;
    const parent = dirname(path);
    if (code !== 'ENOENT' || parent === path || existsSync(parent)) throw error;
    makeDirectories(parent, mode);
    mkdirSync(path, { mode });
  }
  if (mode !== undefined) chmodSync(path, mode);
}

export const octalMode = (mode: number) => `0${(mode & 0o777).toString(8)}`;

const { O_WRONLY, O_RDONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_DSYNC, O_NONBLOCK } = constants;
/** A new file that must not exist yet: never follows a planted symlink, never truncates a stranger's file. */
export const CREATE_EXCLUSIVE = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW;
/**
 * The journal: never reached through a symlink, each write durable when it returns (O_DSYNC): one trip
 * to the thread pool per commit rather than two, about a sixth more durable PATCHes per second. Not
 * O_APPEND: each commit is written at its own offset (journal.ts).
 */
export const JOURNAL_WRITE = O_WRONLY | O_CREAT | O_NOFOLLOW | O_DSYNC;
/**
 * A file to read, never through a symlink, and without waiting: a FIFO planted at its name would otherwise
 * block the open until someone writes to it (a regular file ignores O_NONBLOCK). Callers check fstat.
 */
export const READ_NO_FOLLOW = O_RDONLY | O_NOFOLLOW | O_NONBLOCK;

/** Runs a clean-up step whose failure changes nothing (closing after a failure being reported, say). */
export function quietly(step: () => void): void {
  try {
    step();
  } catch {}
}

/**
 * What `use` makes of the file at `path` opened with `flags`, given its stat: checks look at the very file
 * that is read, never one swapped in between. The file is closed after, whatever happens.
 */
export function withOpenFile<T>(path: string, flags: number | string, use: (fd: number, stat: Stats) => T) {
  const fd = openSync(path, flags);
  try {
    return use(fd, fstatSync(fd));
  } finally {
    closeSync(fd);
  }
}

/** What `read` returns, or `fallback` when it throws: for a look whose failure means only "nothing there". */
export function tryOr<T, F>(read: () => T, fallback: F): T | F {
  try {
    return read();
  } catch {
    return fallback;
  }
}

/** A write that makes no progress would loop for ever: the disk is as good as full. */
const noProgress = () =>
  Object.assign(new Error('no space left on device (write made no progress)'), { code: 'ENOSPC' });

/** Writes every byte, however many calls the kernel needs; throws what the first failing call throws. */
export function writeFully(files: FileSystem, fd: number, buffer: Uint8Array, position?: number): void {
  let offset = 0;
  while (offset < buffer.length) {
    const at = position === undefined ? undefined : position + offset;
    const written = files.writeSync(fd, buffer, offset, buffer.length - offset, at);
    if (written <= 0) throw noProgress();
    offset += written;
  }
}

/** writeFully in the thread pool, one call after another, at `position` in the file. */
export async function writeFullyInBackground(
  files: FileSystem,
  fd: number,
  buffer: Uint8Array,
  position: number,
): Promise<void> {
  let offset = 0;
  while (offset < buffer.length) {
    const written = await files.write(fd, buffer, offset, buffer.length - offset, position + offset);
    if (written <= 0) throw noProgress();
    offset += written;
  }
}

const FILE_SYSTEM_REASONS: Record<string, string> = {
  ENOSPC: 'no space left on the device',
  EDQUOT: 'the disk quota is exhausted',
  EIO: 'an input/output error of the device',
  EROFS: 'the file system is read-only',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOENT: 'no such file or directory',
  ENOTDIR: 'a part of the path is not a directory',
  EISDIR: 'it is a directory',
  ELOOP: 'it is a symbolic link, which serve does not follow there',
  EEXIST: 'it already exists',
  EMFILE: 'too many open files',
};

/** A file-system failure in words a person reads, without a stack or errno numbers. */
export function describeFileSystemError(error: unknown): string {
  const { code, message } = error as NodeJS.ErrnoException;
  return (code && FILE_SYSTEM_REASONS[code]) ?? message ?? String(error);
}

/** ENOSPC and EDQUOT: the write may succeed once space is freed. */
export function isOutOfSpace(error: unknown): boolean {
  const { code } = error as NodeJS.ErrnoException;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

/** A write of the data file or its journal that did not happen; nothing it carried was applied. */
export class StorageError extends Error {
  override readonly name = 'StorageError';
  /** True for ENOSPC and EDQUOT: retrying may work once space is freed. */
  readonly outOfSpace: boolean;

  constructor(what: string, cause: unknown) {
    super(`${what}: ${describeFileSystemError(cause)}`);
    this.outOfSpace = isOutOfSpace(cause);
  }
}

/** Random hex from the Web Crypto global, which loads node:crypto only when used (not in a cold `list`). */
export function randomHex(bytes: number): string {
  return Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(bytes))).toString('hex');
}
