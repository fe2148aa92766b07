import {
  closeSync,
  constants,
  fdatasync,
  fsync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  writeSync,
  writevSync,
} from 'node:fs';
import { open, readFile, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import * as z from 'zod/mini';
import { parseInventoryJson } from '../api/json';
import { describeIssues, type InventoryItem, InventoryList, PetId, Quantity } from '../api/schemas';
import { configError } from '../errors';
import type { InventoryPersistence } from './store';

/**
 * The inventory on disk is a snapshot plus a journal:
 * - `inventory.json` wraps the very bytes GET /inventory serves. It is only ever replaced whole:
 *   written to a temporary file, fsynced, renamed into place, and the directory fsynced.
 * - `inventory.json.journal` holds one line per change made since that snapshot, appended and
 *   fdatasynced before the change is acknowledged. Entries set absolute quantities, so replaying one
 *   that the snapshot already holds changes nothing.
 * A write cut short by a crash leaves at most a torn last journal line, never acknowledged, which the
 * next start drops. When the journal grows past a quarter of the inventory, a new snapshot replaces it.
 */

const FORMAT = 'petinv-inventory';
const PREFIX = Buffer.from(`{"format":"${FORMAT}","version":1,"items":`);
const SUFFIX = Buffer.from('}\n');
const MIN_JOURNAL_ENTRIES = 1024;

const Snapshot = z.object({ format: z.literal(FORMAT), version: z.literal(1), items: InventoryList });
const JournalEntry = z.strictObject({ petId: PetId, quantity: Quantity });

const fsyncAsync = promisify(fsync);
const fdatasyncAsync = promisify(fdatasync);

/** fsync of the directory makes a rename or a new file's name durable. */
async function syncDirectory(path: string): Promise<void> {
  const directory = openSync(dirname(path), constants.O_RDONLY);
  try {
    await fsyncAsync(directory);
  } finally {
    closeSync(directory);
  }
}

function readOptional(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw configError(`cannot read ${path}: ${(error as Error).message}`);
  }
}

function parseSnapshot(path: string, text: string): InventoryItem[] {
  let raw: unknown;
  try {
    raw = parseInventoryJson(text);
  } catch (error) {
    throw configError(
      `data file ${path} is not valid JSON (${(error as Error).message}); it was left as it is`,
    );
  }
  const parsed = Snapshot.safeParse(raw);
  if (!parsed.success) {
    throw configError(
      `data file ${path} does not hold an inventory: ${describeIssues(parsed.error)}; it was left as it is`,
    );
  }
  const seen = new Set<bigint>();
  for (const item of parsed.data.items) {
    if (seen.has(item.petId))
      throw configError(`data file ${path} lists petId ${item.petId} twice; it was left as it is`);
    seen.add(item.petId);
  }
  return parsed.data.items;
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
      throw configError(`${where} is invalid (${(error as Error).message}); it was left as it is`);
    }
    const position = positions.get(entry.petId);
    const item = position === undefined ? undefined : items[position];
    if (position === undefined || !item)
      throw configError(`${where} names pet ${entry.petId}, which the data file lacks; it was left as it is`);
    items[position] = { ...item, quantity: entry.quantity };
  });
  return { entries: lines.length, validBytes: Buffer.byteLength(complete) };
}

export class InventoryFile implements InventoryPersistence {
  private journalEntries: number;
  private snapshotting: Promise<void> | undefined;
  /** The latest fdatasync of the journal, settled either way. */
  private syncing: Promise<void> = Promise.resolve();

  private constructor(
    readonly path: string,
    private readonly journal: number,
    journalEntries: number,
  ) {
    this.journalEntries = journalEntries;
  }

  get journalPath(): string {
    return `${this.path}.journal`;
  }

  /**
   * Opens (or, when there is none, creates with `seed()`) the inventory at `path`. A file that fails
   * to load stops the start and is never touched.
   */
  static async open(
    path: string,
    seed: () => InventoryItem[],
  ): Promise<{ file: InventoryFile; items: InventoryItem[]; created: boolean }> {
    mkdirSync(dirname(path), { recursive: true });
    const journalPath = `${path}.journal`;
    const snapshotText = readOptional(path);
    const journalText = readOptional(journalPath) ?? '';
    if (snapshotText === undefined && journalText !== '') {
      throw configError(
        `journal ${journalPath} exists without its data file ${path}; restore the data file or remove the journal`,
      );
    }
    const items = snapshotText === undefined ? seed() : parseSnapshot(path, snapshotText);
    const { entries, validBytes } = replayJournal(journalPath, journalText, items);
    const journal = openSync(journalPath, 'a');
    const file = new InventoryFile(path, journal, entries);
    if (validBytes < Buffer.byteLength(journalText)) {
      // A torn line from a crash mid-append: it was never acknowledged.
      ftruncateSync(journal, validBytes);
      await fsyncAsync(journal);
    }
    await syncDirectory(journalPath);
    return { file, items, created: snapshotText === undefined };
  }

  async commit(changes: readonly InventoryItem[], listBody: () => Buffer, size: number): Promise<void> {
    // A snapshot under way must finish before the journal it empties takes new lines.
    await this.snapshotting;
    if (this.journalEntries + changes.length > Math.max(MIN_JOURNAL_ENTRIES, size / 4)) {
      this.snapshotting = this.syncing.then(() => this.writeSnapshot(listBody()));
      try {
        await this.snapshotting;
      } finally {
        this.snapshotting = undefined;
      }
      return;
    }
    writeSync(
      this.journal,
      changes.map((item) => `{"petId":${item.petId},"quantity":${item.quantity}}\n`).join(''),
    );
    this.journalEntries += changes.length;
    // An fdatasync makes every line written before it durable, those of an overlapping commit included.
    const sync = fdatasyncAsync(this.journal);
    this.syncing = sync.catch(() => {});
    await sync;
  }

  /** Replaces the snapshot with the whole inventory, then empties the journal it now covers. */
  async writeSnapshot(listBody: Buffer): Promise<void> {
    const temporary = `${this.path}.tmp`;
    const file = openSync(temporary, 'w', 0o644);
    try {
      writevSync(file, [PREFIX, listBody, SUFFIX]);
      await fsyncAsync(file);
    } finally {
      closeSync(file);
    }
    renameSync(temporary, this.path);
    await syncDirectory(this.path);
    ftruncateSync(this.journal, 0);
    await fsyncAsync(this.journal);
    this.journalEntries = 0;
  }

  /** On a clean stop the journal is folded into the snapshot, so the data file alone is complete. */
  async close(listBody?: () => Buffer): Promise<void> {
    await this.snapshotting;
    await this.syncing;
    if (listBody && this.journalEntries > 0) await this.writeSnapshot(listBody());
    closeSync(this.journal);
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Claims the data file for this process with a `.lock` file holding its pid. A lock left by a process
 * that is gone (kill -9) is taken over; one held by a live process refuses the start.
 */
export async function lockDataFile(path: string): Promise<() => Promise<void>> {
  mkdirSync(dirname(path), { recursive: true });
  const lockPath = `${path}.lock`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const lock = await open(lockPath, 'wx', 0o644);
      await lock.writeFile(`${process.pid}\n`);
      await lock.close();
      return async () => {
        await unlink(lockPath).catch(() => {});
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw configError(`cannot lock data file ${path}: ${(error as Error).message}`);
      }
      const owner = Number.parseInt(await readFile(lockPath, 'utf8').catch(() => ''), 10);
      if (Number.isInteger(owner) && owner !== process.pid && isRunning(owner)) {
        throw configError(
          `data file ${path} is in use by another petinv serve (pid ${owner}); stop it or choose another file with --data`,
        );
      }
      await unlink(lockPath).catch(() => {});
    }
  }
  throw configError(`cannot lock data file ${path}: ${lockPath} keeps reappearing`);
}
