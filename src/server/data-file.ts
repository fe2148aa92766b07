import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  readFileSync,
  readlinkSync,
  realpathSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import * as z from 'zod/mini';
import { parseInventoryJson, serializeItems } from '../api/json';
import { describeIssues, type InventoryItem, InventoryList, PetId, Quantity } from '../api/schemas';
import {
  APPEND_NO_FOLLOW,
  CREATE_EXCLUSIVE,
  describeFileSystemError,
  type FileSystem,
  nodeFileSystem,
  READ_NO_FOLLOW,
  StorageError,
  writeFully,
} from '../files/file-system';
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

const FORMAT = 'petinv-inventory';
const PREFIX = Buffer.from(`{"format":"${FORMAT}","version":1,"items":`);
const SUFFIX = Buffer.from('}\n');
const MIN_JOURNAL_ENTRIES = 1024;
/** After a failed snapshot the next try waits, doubling from this up to the maximum: never a tight loop. */
const SNAPSHOT_RETRY_MIN_MS = 1000;
const SNAPSHOT_RETRY_MAX_MS = 60_000;

const Snapshot = z.object({ format: z.literal(FORMAT), version: z.literal(1), items: InventoryList });
const JournalEntry = z.strictObject({ petId: PetId, quantity: Quantity });

/** `petinv`: the wrapped snapshot serve writes; `array`: a plain JSON array, as `petinv list --json` prints. */
export type DataFileFormat = 'petinv' | 'array';

export interface DataFileOptions {
  files?: FileSystem;
  now?: () => number;
}

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
    try {
      return join(realpathSync(dirname(absolute)), basename(absolute));
    } catch {
      return absolute; // Its directory does not exist yet; it is created, so nothing to resolve.
    }
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
  if (!lstatSync(real).isFile())
    throw new ServeError(`data file ${path} is not a regular file; give --data a file path`);
  return real;
}

/** Reads a file without following a symlink planted at its name; undefined when there is none. */
function readNoFollow(path: string, what: string): string | undefined {
  let fd: number;
  try {
    fd = nodeFileSystem.openSync(path, READ_NO_FOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ServeError(`cannot read ${what} ${path}: ${describeFileSystemError(error)}`);
  }
  try {
    if (!fstatSync(fd).isFile()) throw new ServeError(`${what} ${path} is not a regular file`);
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

function parseSnapshot(path: string, text: string): { items: InventoryItem[]; format: DataFileFormat } {
  let raw: unknown;
  try {
    raw = parseInventoryJson(text);
  } catch (error) {
    throw new ServeError(
      `data file ${path} is not valid JSON (${(error as Error).message}); it was left as it is`,
    );
  }
  const format: DataFileFormat = Array.isArray(raw) ? 'array' : 'petinv';
  const parsed = format === 'array' ? InventoryList.safeParse(raw) : Snapshot.safeParse(raw);
  if (!parsed.success) {
    throw new ServeError(
      `data file ${path} does not hold an inventory: ${describeIssues(parsed.error)}; it was left as it is`,
    );
  }
  const items = Array.isArray(parsed.data) ? parsed.data : parsed.data.items;
  const seen = new Set<bigint>();
  for (const item of items) {
    if (seen.has(item.petId))
      throw new ServeError(`data file ${path} lists petId ${item.petId} twice; it was left as it is`);
    seen.add(item.petId);
  }
  return { items, format };
}

/** Applies the journal to the snapshot's items; returns the entry count and the length of its complete lines. */
function replayJournal(
  path: string,
  text: string,
  items: InventoryItem[],
): { entries: number; validBytes: number } {
  const positions = new Map(items.map((item, position) => [item.petId, position]));
  const complete = text.slice(0, text.lastIndexOf('\n') + 1);
  const lines = complete.split('\n');
  lines.pop();
  lines.forEach((line, index) => {
    const where = `journal ${path} line ${index + 1}`;
    let entry: z.output<typeof JournalEntry>;
    try {
      const parsed = JournalEntry.safeParse(parseInventoryJson(line));
      if (!parsed.success) throw new Error(describeIssues(parsed.error));
      entry = parsed.data;
    } catch (error) {
      throw new ServeError(`${where} is invalid (${(error as Error).message}); it was left as it is`);
    }
    const position = positions.get(entry.petId);
    const item = position === undefined ? undefined : items[position];
    if (position === undefined || !item)
      throw new ServeError(
        `${where} names pet ${entry.petId}, which the data file lacks; it was left as it is`,
      );
    items[position] = { ...item, quantity: entry.quantity };
  });
  return { entries: lines.length, validBytes: Buffer.byteLength(complete) };
}

interface LoadedInventory {
  path: string;
  items: InventoryItem[];
  format: DataFileFormat;
  journalText: string;
  journalEntries: number;
  journalValidBytes: number;
}

function loadInventory(path: string): LoadedInventory | undefined {
  const journalPath = `${path}.journal`;
  const snapshotText = readNoFollow(path, 'data file');
  const journalText = readNoFollow(journalPath, 'journal') ?? '';
  if (snapshotText === undefined) {
    if (journalText !== '')
      throw new ServeError(
        `journal ${journalPath} exists without its data file ${path}; restore the data file or remove the journal`,
      );
    return undefined;
  }
  const { items, format } = parseSnapshot(path, snapshotText);
  const { entries, validBytes } = replayJournal(journalPath, journalText, items);
  return { path, items, format, journalText, journalEntries: entries, journalValidBytes: validBytes };
}

/** The inventory a data file holds, its journal applied, for a serve that never writes (`--in-memory`). */
export function readInventoryFile(path: string): { items: InventoryItem[]; format: DataFileFormat } {
  const loaded = loadInventory(resolveDataPath(path));
  if (!loaded)
    throw new ServeError(`data file ${path} does not exist; --in-memory with --data loads an existing file`);
  return { items: loaded.items, format: loaded.format };
}

/** The data file's directory, created when missing; a failure is one line naming it. */
export function createDataDirectory(path: string, files: FileSystem = nodeFileSystem): void {
  try {
    files.mkdirSync(dirname(path));
  } catch (error) {
    throw new ServeError(
      `cannot create the directory of data file ${path}: ${describeFileSystemError(error)}`,
    );
  }
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

/**
 * Writes `body` as the snapshot at `path`: a new temporary file of unpredictable name created
 * exclusively (a symlink planted in the directory is never followed), written whole and fsynced, then
 * renamed into place. On any failure the temporary file is removed and `path` is left as it was.
 */
async function replaceSnapshot(files: FileSystem, path: string, body: Buffer): Promise<void> {
  const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(8).toString('hex')}.tmp`);
  let fd: number | undefined;
  try {
    fd = files.openSync(temporary, CREATE_EXCLUSIVE, 0o644);
    writeFully(files, fd, PREFIX);
    writeFully(files, fd, body);
    writeFully(files, fd, SUFFIX);
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

/** One journal append whose sync is under way. */
interface JournalBatch {
  end: number;
  /** Set when a failure before it cut the journal back past its bytes. */
  lostTo?: unknown;
}

export class InventoryFile {
  private journalEntries: number;
  private journalBytes: number;
  /** A cut-back whose truncation failed: retried before the next append. */
  private repairTo: number | undefined;
  private readonly inFlight = new Set<JournalBatch>();
  /** Settles once the latest append has, its cut-back included. */
  private lastSettled: Promise<void> = Promise.resolve();
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
      journal = files.openSync(journalPath, APPEND_NO_FOLLOW, 0o644);
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
   * Makes `changes` durable: resolves once their journal lines are fdatasynced and every append begun
   * before has settled. Rejects with a StorageError when they could not be written whole; their lines
   * are then cut from the journal, and so are those of any append that followed them.
   */
  async append(changes: readonly InventoryItem[]): Promise<void> {
    const { files } = this;
    if (this.repairTo !== undefined) {
      try {
        files.ftruncateSync(this.journal, this.repairTo);
        this.repairTo = undefined;
      } catch (error) {
        throw new StorageError(`cannot cut back journal ${this.journalPath}`, error);
      }
    }
    const start = this.journalBytes;
    const bytes = Buffer.from(
      changes.map((item) => `{"petId":${item.petId},"quantity":${item.quantity}}\n`).join(''),
    );
    try {
      writeFully(files, this.journal, bytes);
    } catch (error) {
      await this.cutBack(start, error);
      throw new StorageError(`cannot append to journal ${this.journalPath}`, error);
    }
    const batch: JournalBatch = { end: start + bytes.length };
    this.journalBytes = batch.end;
    this.inFlight.add(batch);
    const previous = this.lastSettled;
    let syncError: unknown;
    const settled = (async () => {
      // One fdatasync makes every line written before it durable, an overlapping append's included.
      await files.fdatasync(this.journal).catch((error: unknown) => {
        syncError = error ?? new Error('fdatasync failed');
      });
      await previous;
      if (syncError !== undefined && batch.lostTo === undefined) await this.cutBack(start, syncError);
    })();
    this.lastSettled = settled;
    await settled;
    this.inFlight.delete(batch);
    if (syncError !== undefined)
      throw new StorageError(`cannot make journal ${this.journalPath} durable`, syncError);
    if (batch.lostTo !== undefined)
      throw new StorageError(`an earlier append to journal ${this.journalPath} failed`, batch.lostTo);
    this.journalEntries += changes.length;
  }

  /** Truncates the journal to `length`, its last complete line, refusing every append past it. */
  private async cutBack(length: number, cause: unknown): Promise<void> {
    for (const batch of this.inFlight) if (batch.end > length) batch.lostTo ??= cause;
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
    await this.lastSettled;
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
    await this.lastSettled;
    try {
      if (listBody && this.journalEntries > 0) await this.writeSnapshot(listBody());
    } finally {
      closeQuietly(this.files, this.journal);
    }
  }
}
