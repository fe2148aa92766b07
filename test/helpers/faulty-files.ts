import { fstatSync } from 'node:fs';
import { basename } from 'node:path';
import { type FileSystem, nodeFileSystem } from '../../src/files/file-system';

const failure = (code: string) => Object.assign(new Error(`${code}: injected by the test`), { code });

/**
 * The real file system with faults on demand: a disk that fills up after so many bytes (the write that
 * crosses the line is short, the next one fails with ENOSPC), a limit on file size, writes that are always
 * short, journal writes that are held or fail as their sync would (EIO), fsyncs and renames that fail.
 */
export class FaultyFiles implements FileSystem {
  /** Bytes that still fit on the "disk"; undefined for no limit. */
  spaceLeft: number | undefined;
  /** Overwrites take space too, as on a copy-on-write file system (btrfs, ZFS). */
  copyOnWrite = false;
  /**
   * What was done to which file, by base name, in order: `write NAME`, `sync NAME`, `truncate NAME`,
   * `rename FROM TO`. Lets a test check that a sync came before a write or an answer.
   */
  readonly log: string[] = [];
  /** Every write stores at most this many bytes (a short write, not an error). */
  maxWrite: number | undefined;
  /** No file grows past this many bytes: the write that crosses it is short, the next fails with EFBIG (ulimit -f). */
  fileSizeLimit: number | undefined;
  /** Writes in the background (the journal's, made with O_DSYNC) store their bytes, then fail with this code. */
  failBackgroundWrite: string | undefined;
  failRename: string | undefined;
  /** ftruncate fails with this code (the journal's cut-back after a failed append, or its emptying). */
  failTruncate: string | undefined;
  /** Decides, for each fsync, whether it fails and with which code: given the path the descriptor was opened at. */
  failSync: ((path: string) => string | undefined) | undefined;
  private readonly openedPaths = new Map<number, string>();
  /** Runs before each open: lets a test act at a chosen moment, as another process would. */
  beforeOpen: ((path: string) => void) | undefined;
  /** Counts, for tests that check what was attempted. */
  readonly calls = { write: 0, sync: 0, rename: 0 };
  /** While set, every write in the background waits for it: lets a test make updates arrive meanwhile. */
  holdBackgroundWrites: Promise<void> | undefined;

  /**
   * The next write in the background stores its bytes, then waits for the returned release and fails
   * with `code`, as a journal write whose sync failed; the writes after it succeed.
   */
  failNextBackgroundWrite(code: string): () => void {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const write = this.write;
    this.write = async (fd, buffer, offset, length, position) => {
      this.write = write;
      nodeFileSystem.writeSync(fd, buffer, offset, length, position);
      await held;
      throw failure(code);
    };
    return release;
  }

  private note(step: string, fd: number): void {
    this.log.push(`${step} ${basename(this.openedPaths.get(fd) ?? '?')}`);
  }

  openSync(path: string, flags: number, mode?: number): number {
    this.beforeOpen?.(path);
    const fd = nodeFileSystem.openSync(path, flags, mode);
    this.openedPaths.set(fd, path);
    return fd;
  }

  writeSync(fd: number, buffer: Uint8Array, offset: number, length: number, position?: number): number {
    this.calls.write++;
    this.note('write', fd);
    let allowed = Math.min(length, this.maxWrite ?? length);
    // Only bytes past the file's end take space: an overwrite needs none (as on ext4 or tmpfs), unless
    // copyOnWrite. A write without a position goes at the end here.
    const size = fstatSync(fd).size;
    const overwritable = position === undefined || this.copyOnWrite ? 0 : Math.max(0, size - position);
    if (this.fileSizeLimit !== undefined) {
      const start = position ?? size;
      if (start >= this.fileSizeLimit) throw failure('EFBIG');
      allowed = Math.min(allowed, this.fileSizeLimit - start);
    }
    if (this.spaceLeft !== undefined) {
      if (this.spaceLeft + overwritable <= 0) throw failure('ENOSPC');
      allowed = Math.min(allowed, this.spaceLeft + overwritable);
    }
    const written = nodeFileSystem.writeSync(fd, buffer, offset, allowed, position);
    if (this.spaceLeft !== undefined) this.spaceLeft -= Math.max(0, written - overwritable);
    return written;
  }

  async write(
    fd: number,
    buffer: Uint8Array,
    offset: number,
    length: number,
    position: number,
  ): Promise<number> {
    await this.holdBackgroundWrites;
    const written = this.writeSync(fd, buffer, offset, length, position);
    // As when the bytes reached the page cache and the sync that O_DSYNC makes failed.
    if (this.failBackgroundWrite) throw failure(this.failBackgroundWrite);
    return written;
  }

  async fsync(fd: number): Promise<void> {
    this.calls.sync++;
    this.note('sync', fd);
    const code = this.failSync?.(this.openedPaths.get(fd) ?? '');
    if (code) throw failure(code);
    return nodeFileSystem.fsync(fd);
  }

  fsyncSync(fd: number): void {
    this.calls.sync++;
    const code = this.failSync?.(this.openedPaths.get(fd) ?? '');
    if (code) throw failure(code);
    nodeFileSystem.fsyncSync(fd);
  }

  ftruncateSync(fd: number, length: number): void {
    this.note('truncate', fd);
    if (this.failTruncate) throw failure(this.failTruncate);
    const freed = Math.max(0, fstatSync(fd).size - length);
    nodeFileSystem.ftruncateSync(fd, length);
    // As a real disk does: what the cut took is free again.
    if (this.spaceLeft !== undefined) this.spaceLeft += freed;
  }

  closeSync(fd: number): void {
    this.openedPaths.delete(fd);
    nodeFileSystem.closeSync(fd);
  }

  renameSync(from: string, to: string): void {
    this.calls.rename++;
    this.log.push(`rename ${basename(from)} ${basename(to)}`);
    if (this.failRename) throw failure(this.failRename);
    nodeFileSystem.renameSync(from, to);
  }

  linkSync(existing: string, newPath: string): void {
    nodeFileSystem.linkSync(existing, newPath);
  }

  unlinkSync(path: string): void {
    nodeFileSystem.unlinkSync(path);
  }

  mkdirSync(path: string, mode?: number): void {
    nodeFileSystem.mkdirSync(path, mode);
  }
}
