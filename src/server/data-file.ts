import { fstatSync, statSync } from 'node:fs';
import { serializeItems } from '../contract/json';
import type { InventoryItem } from '../contract/schemas';
import {
  describeFileSystemError,
  type FileSystem,
  JOURNAL_WRITE,
  nodeFileSystem,
  type StorageError,
} from '../files/file-system';
import type { DataFileFormat } from './data-format';
import { createDataDirectory, loadInventory } from './data-load';
import { ServeError } from './errors';
import { Journal } from './journal';
import {
  closeQuietly,
  permissionsOf,
  removeAbandonedSnapshots,
  replaceSnapshot,
  syncDirectory,
} from './snapshot-file';

/**
 * The inventory on disk is a snapshot plus a journal:
 * - `inventory.json` wraps the very bytes GET /inventory serves. It is only ever replaced whole: written
 *   to a new temporary file of unpredictable name, fsynced, renamed into place, the directory fsynced.
 *   A snapshot that could not be written whole is removed, and the journal is kept.
 * - `inventory.json.journal` holds one line per change made since that snapshot, appended with O_DSYNC
 *   (durable when the write returns) before the change is acknowledged, and then zeros: room for the
 *   next appends (journal.ts). Entries set absolute quantities, so replaying one that the snapshot
 *   already holds changes nothing. An append that fails (ENOSPC, or EIO from its sync) is cut back to the
 *   last complete line before anything else is appended, and its changes are refused.
 * A crash mid-append leaves at most a torn last write, never acknowledged, which the next start drops
 * with the zeros after it. When the journal grows past a quarter of the inventory, a new snapshot
 * replaces it.
 */

/**
 * The journal is folded into a new snapshot once it holds more entries than this and a quarter of the
 * inventory. A snapshot holds the commits back while it syncs a new file, its directory and the emptied
 * journal: at 1024 entries that was a tenth to a fifth of a small inventory's durable PATCH rate. A clean
 * stop folds the journal anyway, so only a start after a crash replays it: 16,384 lines add 0.1 to 0.2 s.
 */
const MIN_JOURNAL_ENTRIES = 16_384;
/** After a failed snapshot the next try waits, doubling from this up to the maximum: never a tight loop. */
const SNAPSHOT_RETRY_MIN_MS = 1000;
const SNAPSHOT_RETRY_MAX_MS = 60_000;

export interface DataFileOptions {
  files?: FileSystem;
  /** Milliseconds on a clock that never goes back; performance.now() when absent. */
  now?: () => number;
  /** The journal entries a snapshot waits for, however small the inventory (tests fold sooner). */
  minJournalEntries?: number;
  /** Called once a new snapshot has replaced the data file (a new file: the lock follows it). */
  onSnapshotReplaced?: () => void;
}

/**
 * Opens the journal at `path` and cuts off whatever follows its last complete line: a torn last write
 * from a crash mid-append (never acknowledged), and the zeros laid down ahead of the lines. Appends must
 * only ever land on zeros or past the end, never on what a torn write left.
 */
async function openJournal(
  files: FileSystem,
  path: string,
  dataFile: { permissions: number; owner: number },
  start: { entries: number; bytes: number },
): Promise<Journal> {
  let fd: number;
  try {
    // The journal holds the same inventory: it is created as private as the data file.
    fd = files.openSync(path, JOURNAL_WRITE, dataFile.permissions);
  } catch (error) {
    throw new ServeError(`cannot open journal ${path}: ${describeFileSystemError(error)}`);
  }
  const { uid: owner, size } = fstatSync(fd);
  const runAs = process.getuid?.();
  // Root's is accepted too, as ssh accepts root's files: root can change anything anyway.
  if (runAs !== undefined && owner !== dataFile.owner && owner !== runAs && owner !== 0) {
    // Planted by a third user (in a shared directory, between the data file's creation and this open):
    // whatever it holds, or is given later, would be replayed into the inventory at the next start.
    closeQuietly(files, fd);
    throw new ServeError(
      `journal ${path} belongs to another user (uid ${owner}) than its data file and this serve; check what it holds, then remove it or give it the data file's owner`,
    );
  }
  try {
    if (start.bytes < size) {
      files.ftruncateSync(fd, start.bytes);
      await files.fsync(fd);
    }
    await syncDirectory(files, path);
  } catch (error) {
    closeQuietly(files, fd);
    throw new ServeError(`cannot prepare journal ${path}: ${describeFileSystemError(error)}`);
  }
  return new Journal(path, fd, start, files);
}

export class InventoryFile {
  private snapshotFailures = 0;
  private nextSnapshotAt = 0;
  private readonly files: FileSystem;
  private readonly now: () => number;
  private readonly minJournalEntries: number;

  private constructor(
    readonly path: string,
    private readonly journal: Journal,
    private currentFormat: DataFileFormat,
    private readonly options: DataFileOptions,
  ) {
    this.files = options.files ?? nodeFileSystem;
    // A monotonic clock: the wall clock set back a day would hold every snapshot back for that day.
    this.now = options.now ?? (() => performance.now());
    this.minJournalEntries = options.minJournalEntries ?? MIN_JOURNAL_ENTRIES;
  }

  get journalPath(): string {
    return this.journal.path;
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
  ): Promise<{ file: InventoryFile; items: InventoryItem[]; created: boolean; droppedJournalBytes: number }> {
    const files = options.files ?? nodeFileSystem;
    createDataDirectory(path, files);
    removeAbandonedSnapshots(path);
    const loaded = loadInventory(path);
    const items = loaded?.items ?? seed();
    if (!loaded) {
      try {
        await replaceSnapshot(files, path, Buffer.from(serializeItems(items)));
      } catch (error) {
        throw new ServeError(`cannot create data file ${path}: ${(error as Error).message}`);
      }
    }
    const dataFile = { permissions: permissionsOf(path), owner: statSync(path).uid };
    const journal = await openJournal(files, `${path}.journal`, dataFile, {
      entries: loaded?.journalEntries ?? 0,
      bytes: loaded?.journalValidBytes ?? 0,
    });
    const file = new InventoryFile(path, journal, loaded?.format ?? 'petinv', options);
    const droppedJournalBytes = loaded?.journalUnfinishedBytes ?? 0;
    return { file, items, created: !loaded, droppedJournalBytes };
  }

  /** Makes `changes` durable, then calls `done`: see Journal.append. */
  append(changes: readonly InventoryItem[], done: (error: StorageError | null) => void): void {
    this.journal.append(changes, done);
  }

  /** True when the journal has grown enough to be folded into a new snapshot, and no failed one is cooling off. */
  wantsSnapshot(inventorySize: number): boolean {
    return (
      this.journal.entries > Math.max(this.minJournalEntries, inventorySize / 4) &&
      this.now() >= this.nextSnapshotAt
    );
  }

  /**
   * Replaces the snapshot with the whole inventory, then empties the journal it now covers. No append
   * may be under way. On failure the old snapshot and the journal stay as they were.
   */
  async writeSnapshot(listBody: Buffer): Promise<void> {
    await this.journal.settled();
    this.journal.trimRoom();
    try {
      await replaceSnapshot(this.files, this.path, listBody);
    } catch (error) {
      this.snapshotFailures++;
      const wait = Math.min(SNAPSHOT_RETRY_MAX_MS, SNAPSHOT_RETRY_MIN_MS * 2 ** (this.snapshotFailures - 1));
      this.nextSnapshotAt = this.now() + wait;
      throw error;
    }
    this.options.onSnapshotReplaced?.();
    this.snapshotFailures = 0;
    this.nextSnapshotAt = 0;
    this.currentFormat = 'petinv';
    await this.journal.empty();
  }

  /**
   * On a clean stop the journal is folded into the snapshot, so the data file alone is complete. When
   * that fails, the previous snapshot and the journal stay, the next start replays them, and the
   * StorageError says so.
   */
  async close(listBody?: () => Buffer): Promise<void> {
    await this.journal.settled();
    try {
      // Refused lines still in the journal would come back at the next start: the snapshot empties it.
      if (listBody && (this.journal.entries > 0 || this.journal.owesCutBack))
        await this.writeSnapshot(listBody());
    } finally {
      this.journal.close();
    }
  }
}
