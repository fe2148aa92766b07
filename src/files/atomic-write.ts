import { constants } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import {
  CREATE_EXCLUSIVE,
  type FileSystem,
  nodeFileSystem,
  quietly,
  randomHex,
  writeFully,
} from './file-system';

/**
 * The one way petinv replaces a file: written whole under a temporary name in the same directory, created
 * exclusively (nothing planted there is followed or truncated), fsynced when asked, then renamed over the
 * file (a symlink there is replaced, never written through). A reader sees the old file or the new one; a
 * failure removes the temporary file and leaves the old one.
 */

export interface AtomicWriteOptions {
  /** The new file's permission bits, narrowed by the umask as any new file's are; 0o600 by default. */
  mode?: number;
  /** The temporary file's name, given 16 random hex digits: `.NAME.HEX.tmp` by default. */
  temporaryName?: (random: string) => string;
  /**
   * fsync the new file before the rename, so that a crash never leaves an empty one; off for what can be
   * made again (a cache). syncDirectory makes the rename durable.
   */
  fsync?: boolean;
  /** false: a hard link puts the file in place, never replacing one (EEXIST): for evidence kept aside. */
  replace?: boolean;
  /** The file-system calls, for a test that injects faults; Node's own by default. */
  files?: FileSystem;
}

/** A replacement under way: written, then committed (renamed into place) or aborted. */
export interface AtomicFile {
  readonly temporary: string;
  /** Writes every byte, at `position` when given, else after the last write; a short write is continued. */
  write(bytes: Uint8Array, position?: number): void;
  /** fsyncs (when asked) in the thread pool, closes, renames into place. On failure, aborts and throws. */
  commit(): Promise<void>;
  commitSync(): void;
  /** Closes and removes the temporary file; the old file stays. Quiet, and safe to call more than once. */
  abort(): void;
}

/** Starts replacing `path`: the temporary file is created (and the failure to create it thrown) now. */
export function createAtomicFile(path: string, options: AtomicWriteOptions = {}): AtomicFile {
  const files = options.files ?? nodeFileSystem;
  const random = randomHex(8);
  const name = options.temporaryName?.(random) ?? `.${basename(path)}.${random}.tmp`;
  const temporary = join(dirname(path), name);
  let fd: number | undefined = files.openSync(temporary, CREATE_EXCLUSIVE, options.mode ?? 0o600);
  let state: 'open' | 'committed' | 'aborted' = 'open';

  const opened = (): number => {
    if (fd === undefined) throw new Error(`${temporary} is no longer open (the replacement ended)`);
    return fd;
  };
  const abort = () => {
    if (state !== 'open') return;
    state = 'aborted';
    const open = fd;
    fd = undefined;
    if (open !== undefined) quietly(() => files.closeSync(open));
    quietly(() => files.unlinkSync(temporary));
  };
  const rename = () => {
    files.closeSync(opened());
    fd = undefined;
    if (options.replace === false) files.linkSync(temporary, path);
    else files.renameSync(temporary, path);
    state = 'committed';
    // In place already; a leftover name of the same bytes is harmless.
    if (options.replace === false) quietly(() => files.unlinkSync(temporary));
  };
  const failed = (error: unknown): never => {
    abort();
    throw error;
  };
  const guarded = (step: () => void) => {
    try {
      step();
    } catch (error) {
      failed(error);
    }
  };

  return {
    temporary,
    write: (bytes, position) => guarded(() => writeFully(files, opened(), bytes, position)),
    async commit() {
      if (options.fsync) await files.fsync(opened()).catch(failed);
      guarded(rename);
    },
    commitSync: () =>
      guarded(() => {
        if (options.fsync) files.fsyncSync(opened());
        rename();
      }),
    abort,
  };
}

type Data = string | Uint8Array | readonly Uint8Array[];

/** A replacement of `path` with `data` (a text, bytes, or pieces of bytes), written and ready to commit. */
function written(path: string, data: Data, options: AtomicWriteOptions): AtomicFile {
  const file = createAtomicFile(path, options);
  const pieces =
    typeof data === 'string' ? [Buffer.from(data, 'utf8')] : data instanceof Uint8Array ? [data] : data;
  for (const piece of pieces) file.write(piece);
  return file;
}

/** Replaces `path` with `data` (a text, bytes, or pieces of bytes written one after another). */
export function writeFileAtomicSync(path: string, data: Data, options: AtomicWriteOptions = {}): void {
  written(path, data, options).commitSync();
}

/** writeFileAtomicSync, with the fsync in the thread pool. */
export async function writeFileAtomic(path: string, data: Data, options: AtomicWriteOptions = {}) {
  await written(path, data, options).commit();
}

/** fsync of the directory holding `path`: makes a rename into it, or a new file's name, durable. */
export async function syncDirectory(files: FileSystem, path: string): Promise<void> {
  const directory = files.openSync(dirname(path), constants.O_RDONLY);
  try {
    await files.fsync(directory);
  } finally {
    files.closeSync(directory);
  }
}

/** Renames a file within its directory, durably: how a damaged journal is set aside, byte for byte. */
export async function moveDurably(files: FileSystem, from: string, to: string): Promise<void> {
  files.renameSync(from, to);
  await syncDirectory(files, to);
}
