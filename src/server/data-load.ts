import { crc32 } from 'node:zlib';
import { parseInventoryJson, serializeItems } from '../contract/json';
import { describeIssues, type InventoryItem, InventoryList } from '../contract/schemas';
import { type DataFileFormat, SNAPSHOT_VERSION, Snapshot, snapshotParts } from './data-format';
import { decodeText, readNoFollow, resolveDataPath } from './data-path';
import { ServeError } from './errors';
import { checksumHex, JOURNAL_HEADER } from './journal-format';
import { type JournalState, replayJournal } from './journal-replay';

/** A data file loaded: its snapshot checked, its journal replayed; one that fails stops the start, untouched. */

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
  if (!parsed.success)
    throw new ServeError(
      `data file ${path} does not hold an inventory: ${describeIssues(parsed.error, [], 'the file')}; it was left as it is`,
    );
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

export interface LoadedInventory {
  items: InventoryItem[];
  format: DataFileFormat;
  journal: JournalState;
  journalBytes: Buffer;
}

/** `recover`: damage in the journal replays what is sound before it, rather than refuse the start. */
export function loadInventory(path: string, recover = false): LoadedInventory | undefined {
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
  return {
    items,
    format,
    journal: replayJournal(journalPath, journal, items, recover),
    journalBytes: journal,
  };
}

/** The inventory a data file holds, its journal applied, for a serve that never writes (`--in-memory`). */
export function readInventoryFile(path: string, recover = false): LoadedInventory {
  const loaded = loadInventory(resolveDataPath(path), recover);
  if (!loaded)
    throw new ServeError(`data file ${path} does not exist; --in-memory with --data loads an existing file`);
  return loaded;
}
