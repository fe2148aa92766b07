import { closeSync, fstatSync, lstatSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { crc32 } from 'node:zlib';
import { parseInventoryJson, serializeItems } from '../contract/json';
import { describeIssues, type InventoryItem, InventoryList } from '../contract/schemas';
import {
  describeFileSystemError,
  type FileSystem,
  nodeFileSystem,
  READ_NO_FOLLOW,
} from '../files/file-system';
import {
  type DataFileFormat,
  JournalEntry,
  journalExtent,
  SNAPSHOT_VERSION,
  Snapshot,
  snapshotParts,
} from './data-format';
import { ServeError } from './errors';
import {
  checksumHex,
  JOURNAL_HEADER,
  type JournalChange,
  type JournalDamage,
  type JournalScan,
  scanJournal,
} from './journal-format';

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
  const stat = lstatSync(real);
  if (!stat.isFile())
    throw new ServeError(`data file ${path} is not a regular file; give --data a file path`);
  // No name reaches it: a single-file bind mount still showing a file that serve has since replaced (every
  // snapshot is a new file renamed into place). Its identity is no longer claimed by the serve that
  // replaced it, and what it holds is out of date: a serve on it would answer with other values.
  if (stat.nlink === 0)
    throw new ServeError(
      `data file ${path} is in no directory any more: it was replaced (serve writes each snapshot as a new file) after it was bind-mounted here on its own, and the mount still shows the old file, which is out of date; bind-mount the data file's directory instead`,
    );
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

/** A snapshot whose checksum does not match: damage, which the start refuses, naming the file. */
function snapshotDamaged(path: string, found: string, carried: string): ServeError {
  return new ServeError(
    `data file ${path} is damaged: its items have checksum ${found}, not the ${carried} it carries, so some of what it holds is not what serve wrote; it was left as it is. Restore it from a backup (--recover rebuilds from the journal, never the data file)`,
  );
}

function parseSnapshot(path: string, bytes: Buffer): { items: InventoryItem[]; format: DataFileFormat } {
  // Checked before it is parsed: a changed digit may still parse, and must not be served.
  const parts = snapshotParts(bytes);
  if (parts) {
    const found = checksumHex(crc32(parts.items));
    if (found !== parts.checksum) throw snapshotDamaged(path, found, parts.checksum);
  }
  const text = decodeText(bytes, bytes.length, 'data file', path);
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
      `data file ${path} does not hold an inventory: ${describeIssues(parsed.error, [], 'the file')}; it was left as it is`,
    );
  }
  const items = Array.isArray(parsed.data) ? parsed.data : parsed.data.items;
  if (!Array.isArray(parsed.data)) {
    const { version, crc32: carried } = parsed.data;
    if (version === SNAPSHOT_VERSION && carried === undefined)
      throw new ServeError(
        `data file ${path} is damaged: a version ${version} snapshot without its checksum; it was left as it is. Restore it from a backup`,
      );
    // Laid out other than serve writes it (reformatted by hand): checked as serve serializes its items.
    if (carried !== undefined && !parts) {
      const found = checksumHex(crc32(serializeItems(items)));
      if (found !== carried) throw snapshotDamaged(path, found, carried);
    }
  }
  const seen = new Set<bigint>();
  for (const item of items) {
    if (seen.has(item.petId))
      throw new ServeError(`data file ${path} lists petId ${item.petId} twice; it was left as it is`);
    seen.add(item.petId);
  }
  return { items, format };
}

export const commitsText = (count: number) => `${count} complete commit${count === 1 ? '' : 's'}`;
export const updatesText = (count: number) => `${count} update${count === 1 ? '' : 's'}`;

/** The journal as a start found it: what was replayed, and what follows the sound part. */
export interface JournalState {
  /** `checked`: this version's; `lines`: the previous version's, without checksums; `empty`: nothing in it. */
  format: JournalScan['format'];
  /** The file's length, and where its sound part ends (all of it, unless torn or damaged). */
  length: number;
  soundEnd: number;
  /** Commits (this version's format) and updates replayed. */
  commits: number;
  entries: number;
  /**
   * What follows the sound part: a torn last commit (or, in the previous version's format, an incomplete
   * last line), never acknowledged, or, with `recover` only, damage.
   */
  damage?: JournalDamage;
}

/** Applies journal changes to the items; a change naming a pet the data file lacks refuses the start. */
function applyChanges(
  changes: readonly JournalChange[],
  items: InventoryItem[],
  positions: Map<bigint, number>,
  where: string,
): void {
  for (const change of changes) {
    const position = positions.get(change.petId);
    const item = position === undefined ? undefined : items[position];
    if (position === undefined || !item)
      throw new ServeError(
        `${where} names pet ${change.petId}, which the data file lacks; it was left as it is`,
      );
    items[position] = { ...item, quantity: change.quantity };
  }
}

/**
 * Applies the journal to the snapshot's items. Damage (anything a crash does not explain) refuses the
 * start and leaves every file as it is, unless `recover`: then only the sound commits before it apply.
 */
function replayJournal(path: string, bytes: Buffer, items: InventoryItem[], recover: boolean): JournalState {
  const positions = new Map(items.map((item, position) => [item.petId, position]));
  const scan = scanJournal(bytes);
  if (scan.format === 'empty') return { format: 'empty', length: 0, soundEnd: 0, commits: 0, entries: 0 };
  if (scan.format === 'lines') return replayJournalLines(path, bytes, items, positions, recover);
  const { damage } = scan;
  if (damage?.kind === 'damaged' && !recover)
    throw new ServeError(
      `journal ${path} is damaged at byte offset ${damage.offset} (${damage.reason}), and ${commitsText(damage.commitsAfter)} (${updatesText(damage.updatesAfter)}) ${damage.commitsAfter === 1 ? 'follows' : 'follow'} it: no crash leaves that, and acknowledged updates may be lost there; every file was left as it is. Keep a copy of it, then start with --recover to serve everything before the damage (the journal is moved aside, not removed)`,
    );
  let entries = 0;
  for (const commit of scan.commits) {
    applyChanges(commit.changes, items, positions, `journal ${path} commit ${commit.sequence}`);
    entries += commit.changes.length;
  }
  return {
    format: 'checked',
    length: bytes.length,
    soundEnd: scan.soundEnd,
    commits: scan.commits.length,
    entries,
    ...(damage ? { damage } : {}),
  };
}

/** A line of the previous version's journal as its change, or why it is not one. */
function legacyChange(line: string): JournalChange | { invalid: string } {
  try {
    const parsed = JournalEntry.safeParse(parseInventoryJson(line));
    if (!parsed.success) return { invalid: describeIssues(parsed.error, [], 'the line') };
    return parsed.data;
  } catch (error) {
    return { invalid: (error as Error).message };
  }
}

/**
 * The previous version's journal, read as that version read it (it has no checksums to check). A line
 * that is not a change, or bytes after a stretch of zeros that no crash leaves, refuse the start, unless
 * `recover`: then the lines before it apply, and the rest is reported as not replayed.
 */
function replayJournalLines(
  path: string,
  bytes: Buffer,
  items: InventoryItem[],
  positions: Map<bigint, number>,
  recover: boolean,
): JournalState {
  const { linesEnd, unfinishedBytes, strayBytesAt } = journalExtent(bytes);
  const complete = decodeText(bytes, linesEnd, 'journal', path);
  const lines = complete.split('\n');
  lines.pop();
  let offset = 0;
  let damage: JournalDamage | undefined;
  let entries = 0;
  for (const [index, line] of lines.entries()) {
    const change = legacyChange(line);
    if ('invalid' in change) {
      const after = lines.slice(index + 1).filter((rest) => !('invalid' in legacyChange(rest))).length;
      damage = {
        kind: 'damaged',
        offset,
        reason: `line ${index + 1} is invalid (${change.invalid})`,
        commitsAfter: after,
        updatesAfter: after,
      };
      break;
    }
    applyChanges([change], items, positions, `journal ${path} line ${index + 1}`);
    entries++;
    offset += Buffer.byteLength(line) + 1;
  }
  if (!damage && strayBytesAt !== undefined)
    damage = {
      kind: 'damaged',
      offset: linesEnd,
      reason: `a stretch of zeros, then bytes at offset ${strayBytesAt}, which no write cut short by a crash leaves`,
      commitsAfter: 0,
      updatesAfter: 0,
    };
  if (damage && !recover)
    throw new ServeError(
      `journal ${path}, written by an earlier petinv, is damaged at byte offset ${damage.offset} (${damage.reason}); every file was left as it is. Keep a copy of it, then start with --recover to serve everything before the damage (the journal is moved aside, not removed)`,
    );
  return {
    format: 'lines',
    length: bytes.length,
    soundEnd: damage ? damage.offset : linesEnd,
    commits: entries,
    entries,
    ...(damage
      ? { damage }
      : unfinishedBytes > 0
        ? {
            damage: {
              kind: 'torn' as const,
              offset: linesEnd,
              reason: 'an incomplete line',
              commitsAfter: 0,
              updatesAfter: 0,
            },
          }
        : {}),
  };
}

export interface LoadedInventory {
  path: string;
  items: InventoryItem[];
  format: DataFileFormat;
  journal: JournalState;
  /** The journal's bytes as read. */
  journalBytes: Buffer;
}

export interface LoadOptions {
  /** Damage in the journal: replay what is sound before it, rather than refuse the start. */
  recover?: boolean;
}

export function loadInventory(path: string, options: LoadOptions = {}): LoadedInventory | undefined {
  const journalPath = `${path}.journal`;
  const snapshotBytes = readNoFollow(path, 'data file');
  const journal = readNoFollow(journalPath, 'journal') ?? Buffer.alloc(0);
  if (snapshotBytes === undefined) {
    // A journal of this version holding nothing but its header is a start that never got further.
    if (journal.length > 0 && !journal.equals(JOURNAL_HEADER))
      throw new ServeError(
        `journal ${journalPath} exists without its data file ${path}; restore the data file or remove the journal`,
      );
    return undefined;
  }
  const { items, format } = parseSnapshot(path, snapshotBytes);
  const state = replayJournal(journalPath, journal, items, options.recover === true);
  return { path, items, format, journal: state, journalBytes: journal };
}

/** The inventory a data file holds, its journal applied, for a serve that never writes (`--in-memory`). */
export function readInventoryFile(
  path: string,
  options: LoadOptions = {},
): { items: InventoryItem[]; format: DataFileFormat; journal: JournalState } {
  const loaded = loadInventory(resolveDataPath(path), options);
  if (!loaded)
    throw new ServeError(`data file ${path} does not exist; --in-memory with --data loads an existing file`);
  return { items: loaded.items, format: loaded.format, journal: loaded.journal };
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
