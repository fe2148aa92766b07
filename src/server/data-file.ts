import { randomBytes } from 'node:crypto';
import { constants, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { serializeItems } from '../api/json';
import type { InventoryItem } from '../api/schemas';
import {
  APPEND_NO_FOLLOW,
  CREATE_EXCLUSIVE,
  describeFileSystemError,
  type FileSystem,
  nodeFileSystem,
  StorageError,
  writeFully,
} from '../files/file-system';
import { type DataFileFormat, journalLines, SNAPSHOT_PREFIX, SNAPSHOT_SUFFIX } from './data-format';
import { createDataDirectory, loadInventory } from './data-load';
import { ServeError } from './errors';

/**
 * The inventory on disk is a snapshot plus a journal:
 * - `inventory.json` wraps the very bytes GET /inventory serves. It is only ever replaced whole: written
 *   to a new temporary file of unpredictable name, fsynced, renamed into place, the directory fsynced.
 *   A snapshot that could not be written whole is removed, and the journal is kept.
 * - `inventory.json.journal` holds one line per change made since that snapshot, appended and
 *   fdatasynced before the change is acknowledged. Entries set absolute quantities, so replaying one
 *   that the snapshot already holds changes nothing. An append that fails, or whose sync fails, is cut
 *   back to the last complete line before anything else is appended, and its changes are refused.
 * A crash mid-append leaves at most a torn last journal line, never acknowledged, which the next start
 * drops. When the journal grows past a quarter of the inventory, a new snapshot replaces it.
 */

const MIN_JOURNAL_ENTRIES = 1024;
/** After a failed snapshot the next try waits, doubling from this up to the maximum: never a tight loop. */
const SNAPSHOT_RETRY_MIN_MS = 1000;
const SNAPSHOT_RETRY_MAX_MS = 60_000;

export interface DataFileOptions {
  files?: FileSystem;
  now?: () => number;
}

/** fsync of the directory makes a rename or a new file's name durable. */
async function syncDirectory(files: FileSystem, path: string): Promise<void> {
  const directory = files.openSync(dirname(path), constants.O_RDONLY);
  try {
    await files.fsync(directory);
  } finally {
    files.closeSync(directory);
  }
}

/** The permission bits of the snapshot being replaced: a new one never widens what the operator set. */
function permissionsOf(path: string): number {
  try {
    return statSync(path).mode & 0o777;
  } catch {
    return 0o644; // The first snapshot: the usual mode, narrowed by the umask.
  }
}

/**
 * Writes `body` as the snapshot at `path`: a new temporary file of unpredictable name created
 * exclusively (a symlink planted in the directory is never followed), written whole and fsynced, then
 * renamed into place. On any failure the temporary file is removed and `path` is left as it was.
 */
async function replaceSnapshot(files: FileSystem, path: string, body: Buffer): Promise<void> {
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

function closeQuietly(files: FileSystem, fd: number): void {
  try {
    files.closeSync(fd);
  } catch {
    // Closing after a failed write: the failure that matters is already being reported.
  }
}
export class InventoryFile {
  private journalEntries: number;
  private journalBytes: number;
  /** A cut-back whose truncation failed: retried before the next append. */
  private repairTo: number | undefined;
  private appending = false;
  /** Waiting for the append under way to end, its cut-back included. */
  private appendWaiters: (() => void)[] = [];
  private snapshotFailures = 0;
  private nextSnapshotAt = 0;
  private readonly files: FileSystem;
  private readonly now: () => number;

  private constructor(
    readonly path: string,
    private readonly journal: number,
    journal_: { entries: number; bytes: number },
    private currentFormat: DataFileFormat,
    options: DataFileOptions,
  ) {
    this.journalEntries = journal_.entries;
    this.journalBytes = journal_.bytes;
    this.files = options.files ?? nodeFileSystem;
    this.now = options.now ?? Date.now;
  }

  get journalPath(): string {
    return `${this.path}.journal`;
  }

  /** `array` until the first snapshot rewrites a plain-array data file in serve's own format. */
  get format(): DataFileFormat {
    return this.currentFormat;
  }

  /**
   * Opens (or, when there is none, creates with `seed()`) the inventory at `path`, which must already be
   * resolved (resolveDataPath). A file that fails to load stops the start and is never touched.
   */
  static async open(
    path: string,
    seed: () => InventoryItem[],
    options: DataFileOptions = {},
  ): Promise<{ file: InventoryFile; items: InventoryItem[]; created: boolean }> {
    const files = options.files ?? nodeFileSystem;
    createDataDirectory(path, files);
    const loaded = loadInventory(path);
    const items = loaded?.items ?? seed();
    if (!loaded) {
      try {
        await replaceSnapshot(files, path, Buffer.from(serializeItems(items)));
      } catch (error) {
        throw new ServeError(`cannot create data file ${path}: ${(error as Error).message}`);
      }
    }
    const journalPath = `${path}.journal`;
    let journal: number;
    try {
      // The journal holds the same inventory: it is created as private as the data file.
      journal = files.openSync(journalPath, APPEND_NO_FOLLOW, permissionsOf(path));
    } catch (error) {
      throw new ServeError(`cannot open journal ${journalPath}: ${describeFileSystemError(error)}`);
    }
    const validBytes = loaded?.journalValidBytes ?? 0;
    const file = new InventoryFile(
      path,
      journal,
      { entries: loaded?.journalEntries ?? 0, bytes: validBytes },
      loaded?.format ?? 'petinv',
      options,
    );
    try {
      if (loaded && validBytes < Buffer.byteLength(loaded.journalText)) {
        // A torn line from a crash mid-append: it was never acknowledged.
        files.ftruncateSync(journal, validBytes);
        await files.fsync(journal);
      }
      await syncDirectory(files, journalPath);
    } catch (error) {
      closeQuietly(files, journal);
      throw new ServeError(`cannot prepare journal ${journalPath}: ${describeFileSystemError(error)}`);
    }
    return { file, items, created: !loaded };
  }

  /**
   * Makes `changes` durable: calls `done` with null once their journal lines are fdatasynced, or with a
   * StorageError when they could not be written whole, and then their lines are cut from the journal.
   * One append at a time: the next is called only after `done`.
   */
  append(changes: readonly InventoryItem[], done: (error: StorageError | null) => void): void {
    const { files } = this;
    const finish = (error: StorageError | null) => {
      this.appending = false;
      const waiters = this.appendWaiters;
      this.appendWaiters = [];
      for (const resolve of waiters) resolve();
      done(error);
    };
    this.appending = true;
    if (this.repairTo !== undefined) {
      try {
        files.ftruncateSync(this.journal, this.repairTo);
        this.repairTo = undefined;
      } catch (error) {
        finish(new StorageError(`cannot cut back journal ${this.journalPath}`, error));
        return;
      }
    }
    const start = this.journalBytes;
    const bytes = journalLines(changes);
    try {
      writeFully(files, this.journal, bytes);
    } catch (error) {
      this.cutBack(start).then(() =>
        finish(new StorageError(`cannot append to journal ${this.journalPath}`, error)),
      );
      return;
    }
    this.journalBytes = start + bytes.length;
    files.fdatasync(this.journal).then(
      () => {
        this.journalEntries += changes.length;
        finish(null);
      },
      (error: unknown) =>
        this.cutBack(start).then(() =>
          finish(
            new StorageError(
              `cannot make journal ${this.journalPath} durable`,
              error ?? new Error('fdatasync failed'),
            ),
          ),
        ),
    );
  }

  /** Resolves once no append is under way. */
  private appendsSettled(): Promise<void> {
    if (!this.appending) return Promise.resolve();
    return new Promise((resolve) => this.appendWaiters.push(resolve));
  }

  /** Truncates the journal to `length`, its last complete line; never rejects. */
  private async cutBack(length: number): Promise<void> {
    this.journalBytes = length;
    try {
      this.files.ftruncateSync(this.journal, length);
      // Durable before the failure is answered, so a crash cannot bring the refused lines back.
      await this.files.fsync(this.journal);
    } catch {
      this.repairTo = length;
    }
  }

  /** True when the journal has grown enough to be folded into a new snapshot, and no failed one is cooling off. */
  wantsSnapshot(inventorySize: number): boolean {
    return (
      this.journalEntries > Math.max(MIN_JOURNAL_ENTRIES, inventorySize / 4) &&
      this.now() >= this.nextSnapshotAt
    );
  }

  /**
   * Replaces the snapshot with the whole inventory, then empties the journal it now covers. No append
   * may be under way. On failure the old snapshot and the journal stay as they were.
   */
  async writeSnapshot(listBody: Buffer): Promise<void> {
    await this.appendsSettled();
    try {
      await replaceSnapshot(this.files, this.path, listBody);
    } catch (error) {
      this.snapshotFailures++;
      const wait = Math.min(SNAPSHOT_RETRY_MAX_MS, SNAPSHOT_RETRY_MIN_MS * 2 ** (this.snapshotFailures - 1));
      this.nextSnapshotAt = this.now() + wait;
      throw error;
    }
    this.snapshotFailures = 0;
    this.nextSnapshotAt = 0;
    this.currentFormat = 'petinv';
    try {
      this.files.ftruncateSync(this.journal, 0);
      await this.files.fsync(this.journal);
      this.journalBytes = 0;
      this.journalEntries = 0;
    } catch {
      // The journal stays longer than needed: replaying it over the new snapshot changes nothing.
    }
  }

  /**
   * On a clean stop the journal is folded into the snapshot, so the data file alone is complete. When
   * that fails, the previous snapshot and the journal stay, the next start replays them, and the
   * StorageError says so.
   */
  async close(listBody?: () => Buffer): Promise<void> {
    await this.appendsSettled();
    try {
      if (listBody && this.journalEntries > 0) await this.writeSnapshot(listBody());
    } finally {
      closeQuietly(this.files, this.journal);
    }
  }
}
