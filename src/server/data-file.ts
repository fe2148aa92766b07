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
  writeFullyInBackground,
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

/** A batch of journal lines on its way to disk, and the one waiting for it. */
interface JournalCommit {
  bytes: Buffer;
  entries: number;
  done: (error: StorageError | null) => void;
  /** Where its lines begin in the journal, once its write has begun. */
  start: number;
  state: 'waiting' | 'writing' | 'syncing' | 'synced' | 'failed';
  error?: StorageError;
}
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
  /** Appends not yet answered, in the order they were made: answered in that order. */
  private commits: JournalCommit[] = [];
  /** Writes and syncs handed to the thread pool and not yet back. */
  private operations = 0;
  private cuttingBack = false;
  /** Waiting for every append to be answered, cut-backs included. */
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
   * Several appends may be under way: their writes go to the thread pool one after another (so the lines
   * land in order and the main thread never waits on a write behind a sync), each synced as soon as it is
   * written, and they are answered strictly in order. When one fails, nothing more is written until
   * everything under way is back; the journal is then cut back to where the failed one began, it is
   * refused, and the appends after it are written again from there.
   */
  append(changes: readonly InventoryItem[], done: (error: StorageError | null) => void): void {
    this.commits.push({
      bytes: journalLines(changes),
      entries: changes.length,
      done,
      start: 0,
      state: 'waiting',
    });
    this.writeNext();
  }

  private writeNext(): void {
    if (this.commits.some((commit) => commit.state === 'writing' || commit.state === 'failed')) return;
    const commit = this.commits.find((candidate) => candidate.state === 'waiting');
    if (!commit) return;
    const { files } = this;
    if (this.repairTo !== undefined) {
      try {
        files.ftruncateSync(this.journal, this.repairTo);
        this.repairTo = undefined;
      } catch (error) {
        this.fail(commit, new StorageError(`cannot cut back journal ${this.journalPath}`, error));
        return;
      }
    }
    commit.state = 'writing';
    commit.start = this.journalBytes;
    this.operations++;
    writeFullyInBackground(files, this.journal, commit.bytes).then(
      () => {
        this.operations--;
        this.journalBytes = commit.start + commit.bytes.length;
        commit.state = 'syncing';
        this.operations++;
        files.fdatasync(this.journal).then(
          () => {
            this.operations--;
            commit.state = 'synced';
            this.answer();
          },
          (error: unknown) => {
            this.operations--;
            const cause = error ?? new Error('fdatasync failed');
            this.fail(commit, new StorageError(`cannot make journal ${this.journalPath} durable`, cause));
          },
        );
        this.writeNext();
      },
      (error: unknown) => {
        this.operations--;
        this.fail(commit, new StorageError(`cannot append to journal ${this.journalPath}`, error));
      },
    );
  }

  private fail(commit: JournalCommit, error: StorageError): void {
    commit.state = 'failed';
    commit.error = error;
    this.answer();
  }

  /** Answers the appends at the head that are synced; at a failed one, once nothing is under way, cuts back. */
  private answer(): void {
    while (this.commits[0]?.state === 'synced') {
      const commit = this.commits.shift() as JournalCommit;
      this.journalEntries += commit.entries;
      commit.done(null);
    }
    const failed = this.commits.find((commit) => commit.state === 'failed');
    if (!failed || this.operations > 0) {
      this.notifyIfSettled();
      return;
    }
    // Everything written after the failed one goes too: a later sync cannot vouch for lines before it.
    if (this.cuttingBack) return;
    this.cuttingBack = true;
    void this.cutBack(failed.start).then(() => {
      this.cuttingBack = false;
      const index = this.commits.indexOf(failed);
      // Answered ones cannot follow a failed one: answer() stops at the first that is not synced.
      this.commits.splice(index, 1);
      for (const later of this.commits) later.state = 'waiting';
      failed.done(failed.error as StorageError);
      this.writeNext();
      this.notifyIfSettled();
    });
  }

  private notifyIfSettled(): void {
    if (this.commits.length > 0) return;
    const waiters = this.appendWaiters;
    this.appendWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Resolves once no append is under way. */
  private appendsSettled(): Promise<void> {
    if (this.commits.length === 0) return Promise.resolve();
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
