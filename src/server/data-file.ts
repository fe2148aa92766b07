import { serializeItems } from '../contract/json';
import type { InventoryItem } from '../contract/schemas';
import { type FileSystem, nodeFileSystem, type StorageError } from '../files/file-system';
import type { DataFileFormat } from './data-format';
import { loadInventory } from './data-load';
import { createDataDirectory } from './data-path';
import { ServeError } from './errors';
import type { Journal } from './journal';
import { openJournal } from './journal-open';
import { removeAbandonedSnapshots, replaceSnapshot } from './snapshot-file';

/** The inventory on disk: a snapshot and a journal of the commits since, as docs/serve-durability.md says. */

/**
 * The fewest journal entries a snapshot waits for: snapshots hold commits back (at 1024 entries, a tenth
 * to a fifth of a small inventory's durable PATCH rate), and replaying 16,384 after a crash adds 0.1-0.2 s.
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
  /**
   * Called once a new snapshot has replaced the data file (a new file: the lock follows it), and after one
   * that failed, which may have replaced it before its failure (the directory's sync).
   */
  onSnapshotReplaced?: () => void;
  /** A damaged journal: start from what is sound before the damage and move it aside (--recover). */
  recover?: boolean;
}

export class InventoryFile {
  private snapshotFailures = 0;
  private nextSnapshotAt = 0;
  private readonly files: FileSystem;
  private readonly now: () => number;

  private constructor(
    readonly path: string,
    private readonly journal: Journal,
    /** `array` until the first snapshot rewrites a plain-array data file in serve's own format. */
    public format: DataFileFormat,
    private readonly options: DataFileOptions,
  ) {
    this.files = options.files ?? nodeFileSystem;
    // A monotonic clock: the wall clock set back a day would hold every snapshot back for that day.
    this.now = options.now ?? (() => performance.now());
  }

  get journalPath(): string {
    return this.journal.path;
  }

  /**
   * Opens (or, when there is none, creates with `seed()`) the inventory at `path`, which must already be
   * resolved (resolveDataPath). A file that fails to load stops the start and is never touched.
   */
  static async open(path: string, seed: () => InventoryItem[], options: DataFileOptions = {}) {
    const files = options.files ?? nodeFileSystem;
    createDataDirectory(path, files);
    const loaded = loadInventory(path, options.recover);
    // Only once the start goes ahead: a start refused (a damaged journal) leaves every file as it found it.
    removeAbandonedSnapshots(path);
    const items = loaded?.items ?? seed();
    if (!loaded)
      await replaceSnapshot(files, path, Buffer.from(serializeItems(items))).catch((error: unknown) => {
        throw new ServeError(`cannot create data file ${path}: ${(error as Error).message}`);
      });
    const { journal, report } = await openJournal(files, path, loaded, items);
    // Folding a journal of the previous version, or recovering, wrote a snapshot of serve's own format.
    const rewritten = report.foldedLegacyEntries !== undefined || report.recovered !== undefined;
    const format = rewritten ? 'petinv' : (loaded?.format ?? 'petinv');
    const file = new InventoryFile(path, journal, format, options);
    return { file, items, created: !loaded, journal: report };
  }

  /** Makes `changes` durable, then calls `done`: see Journal.append. */
  append(changes: readonly InventoryItem[], done: (error: StorageError | null) => void): void {
    this.journal.append(changes, done);
  }

  /** True when the journal has grown enough to be folded into a new snapshot, and no failed one is cooling off. */
  wantsSnapshot(inventorySize: number): boolean {
    const threshold = Math.max(this.options.minJournalEntries ?? MIN_JOURNAL_ENTRIES, inventorySize / 4);
    return this.journal.entries > threshold && this.now() >= this.nextSnapshotAt;
  }

  /**
   * Replaces the snapshot with the whole inventory, then empties the journal it now covers. No append
   * may be under way. On failure the old snapshot and the journal stay as they were.
   */
  async writeSnapshot(listBody: Buffer): Promise<void> {
    await this.journal.settled();
    try {
      await replaceSnapshot(this.files, this.path, listBody);
    } catch (error) {
      // What failed may come after the new file was renamed into place (its directory's sync): the name
      // may reach the new snapshot already, and the lock must follow it (a no-op if it reaches the old one).
      this.options.onSnapshotReplaced?.();
      this.snapshotFailures++;
      const wait = Math.min(SNAPSHOT_RETRY_MAX_MS, SNAPSHOT_RETRY_MIN_MS * 2 ** (this.snapshotFailures - 1));
      this.nextSnapshotAt = this.now() + wait;
      throw error;
    }
    this.options.onSnapshotReplaced?.();
    this.snapshotFailures = 0;
    this.nextSnapshotAt = 0;
    this.format = 'petinv';
    await this.journal.empty();
  }

  /**
   * On a clean stop the journal is folded into the snapshot, so the data file alone is complete. When that
   * fails, the previous snapshot and the journal stay, the next start replays them, and the error says so.
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
