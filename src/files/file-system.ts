import {
  chmodSync,
  closeSync,
  constants,
  existsSync,
  fsync,
  fsyncSync,
  ftruncateSync,
  linkSync,
  mkdirSync,
  openSync,
  renameSync,
  statfsSync,
  statSync,
  unlinkSync,
  write,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { promisify } from 'node:util';

/**
 * Every call the data file and its lock make that can change the disk, in one injectable layer: tests
 * hand in a layer that fails with ENOSPC after so many bytes, writes short, or fails at the final stop,
 * and prove that nothing acknowledged is lost and that the file still loads.
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
  /** Bytes free to this user on the file system holding `path`; undefined when it cannot tell. */
  freeSpace(path: string): number | undefined;
}

const fsyncAsync = promisify(fsync);

export const nodeFileSystem: FileSystem = {
  openSync: (path, flags, mode) => openSync(path, flags, mode),
  writeSync: (fd, buffer, offset, length, position) => writeSync(fd, buffer, offset, length, position),
  write: (fd, buffer, offset, length, position) =>
    new Promise((resolve, reject) =>
      write(fd, buffer, offset, length, position, (error, written) =>
        error ? reject(error) : resolve(written),
      ),
    ),
  fsync: (fd) => fsyncAsync(fd),
  fsyncSync: (fd) => fsyncSync(fd),
  ftruncateSync: (fd, length) => ftruncateSync(fd, length),
  closeSync: (fd) => closeSync(fd),
  renameSync: (from, to) => renameSync(from, to),
  linkSync: (existing, newPath) => linkSync(existing, newPath),
  unlinkSync: (path) => unlinkSync(path),
  mkdirSync: (path, mode) => makeDirectories(path, mode),
  freeSpace: (path) => {
    try {
      const { bavail, bsize } = statfsSync(path);
      return bavail * bsize;
    } catch {
      return undefined;
    }
  },
};

/**
 * mkdir -p, one level at a time. Node's recursive mkdirSync (20 to 24) never returns when a directory cannot
 * be made in a parent that exists (ENOENT under /proc, say); this fails with that error instead. Each
 * directory it creates gets `mode` exactly: mkdir's mode is narrowed by the umask (a umask of 0777 would
 * leave 0000, one of 0 leaves it as asked), so it is set again once the directory exists. A directory
 * that was there already is left as it is.
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

const { O_WRONLY, O_RDONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_DSYNC, O_NONBLOCK } = constants;
/** A new file that must not exist yet: never follows a planted symlink, never truncates a stranger's file. */
export const CREATE_EXCLUSIVE = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW;
/**
 * The journal: created when absent, never reached through a symlink, and each write durable when it
 * returns (O_DSYNC, as a write and an fdatasync are): one trip to the thread pool per commit rather than
 * two, which the durable PATCH bench shows as about a sixth more updates per second. Not O_APPEND: the
 * journal writes each commit at its own offset, into zeros laid down ahead of it (journal.ts).
 */
export const JOURNAL_WRITE = O_WRONLY | O_CREAT | O_NOFOLLOW | O_DSYNC;
/**
 * A file to read, never through a symlink, and without waiting: a FIFO planted at its name would otherwise
 * block the open until someone writes to it (a regular file ignores O_NONBLOCK). Callers check fstat.
 */
export const READ_NO_FOLLOW = O_RDONLY | O_NOFOLLOW | O_NONBLOCK;

/**
 * Runs a clean-up step whose failure changes nothing: closing after a failure that is already being
 * reported, removing what may be gone already.
 */
export function quietly(step: () => void): void {
  try {
    step();
  } catch {
    // Nothing to do: see above.
  }
}

/** Writes every byte, however many calls the kernel needs; throws what the first failing call throws. */
export function writeFully(files: FileSystem, fd: number, buffer: Uint8Array, position?: number): void {
  let offset = 0;
  while (offset < buffer.length) {
    const at = position === undefined ? undefined : position + offset;
    const written = files.writeSync(fd, buffer, offset, buffer.length - offset, at);
    // A write that makes no progress would loop for ever: the disk is as good as full.
    if (written <= 0)
      throw Object.assign(new Error('no space left on device (write made no progress)'), { code: 'ENOSPC' });
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
    if (written <= 0)
      throw Object.assign(new Error('no space left on device (write made no progress)'), { code: 'ENOSPC' });
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

/**
 * Random hex for a temporary file's name, from the Web Crypto global: node:crypto loads on first use,
 * so a command that writes no such file (a cold `petinv list`) does not pay the milliseconds it takes.
 */
export function randomHex(bytes: number): string {
  return Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(bytes))).toString('hex');
}
