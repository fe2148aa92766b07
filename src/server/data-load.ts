import { closeSync, fstatSync, lstatSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type * as z from 'zod/mini';
import { parseInventoryJson } from '../api/json';
import { describeIssues, type InventoryItem, InventoryList } from '../api/schemas';
import {
  describeFileSystemError,
  type FileSystem,
  nodeFileSystem,
  READ_NO_FOLLOW,
} from '../files/file-system';
import { type DataFileFormat, JournalEntry, journalExtent, Snapshot } from './data-format';
import { ServeError } from './errors';

/**
 * Finding and loading a data file: its real path, the snapshot parsed and checked, the journal replayed
 * over it. A file that fails to load stops the start with its path and the reason, and is left as it is.
 */

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
function readNoFollow(path: string, what: string): Buffer | undefined {
  let fd: number;
  try {
    fd = nodeFileSystem.openSync(path, READ_NO_FOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ServeError(`cannot read ${what} ${path}: ${describeFileSystemError(error)}`);
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new ServeError(`${what} ${path} is not a regular file`);
    try {
      return readFileSync(fd);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ERR_FS_FILE_TOO_LARGE') throw error;
      throw new ServeError(
        `${what} ${path} is too large to read (${stats.size} bytes); it was left as it is`,
      );
    }
  } finally {
    closeSync(fd);
  }
}

/** `bytes` as text; a file too large for one JavaScript string is a one-line error, not a crash. */
function decodeText(bytes: Buffer, end: number, what: string, path: string): string {
  try {
    return bytes.toString('utf8', 0, end);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ERR_STRING_TOO_LONG') throw error;
    throw new ServeError(`${what} ${path} is too large to read (${end} bytes); it was left as it is`);
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

/**
 * Applies the journal to the snapshot's items; returns the entry count, the length of its complete lines,
 * and how many bytes a write cut short left after them.
 */
function replayJournal(
  path: string,
  bytes: Buffer,
  items: InventoryItem[],
): { entries: number; validBytes: number; unfinishedBytes: number } {
  const positions = new Map(items.map((item, position) => [item.petId, position]));
  const { linesEnd, unfinishedBytes, strayBytesAt } = journalExtent(bytes);
  if (strayBytesAt !== undefined)
    throw new ServeError(
      `journal ${path} holds bytes at offset ${strayBytesAt} after a stretch of zeros, which no write cut short by a crash leaves (was it shortened or written to while serve ran?); it was left as it is`,
    );
  const complete = decodeText(bytes, linesEnd, 'journal', path);
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
  return { entries: lines.length, validBytes: linesEnd, unfinishedBytes };
}

export interface LoadedInventory {
  path: string;
  items: InventoryItem[];
  format: DataFileFormat;
  journalEntries: number;
  journalValidBytes: number;
  /** Bytes after the journal's last complete line, its zeros aside: a write a crash cut short. */
  journalUnfinishedBytes: number;
}

export function loadInventory(path: string): LoadedInventory | undefined {
  const journalPath = `${path}.journal`;
  const snapshotBytes = readNoFollow(path, 'data file');
  const journal = readNoFollow(journalPath, 'journal') ?? Buffer.alloc(0);
  if (snapshotBytes === undefined) {
    if (journal.length > 0)
      throw new ServeError(
        `journal ${journalPath} exists without its data file ${path}; restore the data file or remove the journal`,
      );
    return undefined;
  }
  const { items, format } = parseSnapshot(
    path,
    decodeText(snapshotBytes, snapshotBytes.length, 'data file', path),
  );
  const { entries, validBytes, unfinishedBytes } = replayJournal(journalPath, journal, items);
  return {
    path,
    items,
    format,
    journalEntries: entries,
    journalValidBytes: validBytes,
    journalUnfinishedBytes: unfinishedBytes,
  };
}

/** The inventory a data file holds, its journal applied, for a serve that never writes (`--in-memory`). */
export function readInventoryFile(path: string): { items: InventoryItem[]; format: DataFileFormat } {
  const loaded = loadInventory(resolveDataPath(path));
  if (!loaded)
    throw new ServeError(`data file ${path} does not exist; --in-memory with --data loads an existing file`);
  return { items: loaded.items, format: loaded.format };
}

/**
 * The data file's directory, created when missing, for this user alone (0700, whatever the umask: the
 * inventory and its journal are nobody else's to read); a failure is one line naming it.
 */
export function createDataDirectory(path: string, files: FileSystem = nodeFileSystem): void {
  try {
    files.mkdirSync(dirname(path), 0o700);
  } catch (error) {
    throw new ServeError(
      `cannot create the directory of data file ${path}: ${describeFileSystemError(error)}`,
    );
  }
}
