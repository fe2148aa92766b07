import * as z from 'zod/mini';
import { InventoryList, PetId, Quantity } from '../contract/schemas';

const FORMAT = 'petinv-inventory';
/** A snapshot as docs/serve-durability.md shows it: this prefix, the body GET serves, SNAPSHOT_SUFFIX. */
export const SNAPSHOT_VERSION = 2;
const SNAPSHOT_CHECKSUM_AT = `{"format":"${FORMAT}","version":${SNAPSHOT_VERSION},"crc32":"`;
const SNAPSHOT_ITEMS_AT = '","items":';
export const snapshotPrefix = (checksum: string): Buffer =>
  Buffer.from(`${SNAPSHOT_CHECKSUM_AT}${checksum}${SNAPSHOT_ITEMS_AT}`);
export const SNAPSHOT_SUFFIX = Buffer.from('}\n');

/**
 * The checksum and the items' bytes of a snapshot exactly as serve writes it; undefined for any other
 * layout (a hand-made or reformatted file), whose items are checked as serve would serialize them.
 */
export function snapshotParts(bytes: Buffer): { checksum: string; items: Buffer } | undefined {
  const checksumAt = SNAPSHOT_CHECKSUM_AT.length;
  const itemsAt = checksumAt + 8 + SNAPSHOT_ITEMS_AT.length;
  if (bytes.length < itemsAt + SNAPSHOT_SUFFIX.length) return undefined;
  if (bytes.toString('latin1', 0, checksumAt) !== SNAPSHOT_CHECKSUM_AT) return undefined;
  if (bytes.toString('latin1', checksumAt + 8, itemsAt) !== SNAPSHOT_ITEMS_AT) return undefined;
  if (!bytes.subarray(bytes.length - SNAPSHOT_SUFFIX.length).equals(SNAPSHOT_SUFFIX)) return undefined;
  return {
    checksum: bytes.toString('latin1', checksumAt, checksumAt + 8),
    items: bytes.subarray(itemsAt, bytes.length - SNAPSHOT_SUFFIX.length),
  };
}

export const Snapshot = z.object({
  format: z.literal(FORMAT),
  version: z.union([z.literal(1), z.literal(SNAPSHOT_VERSION)]),
  crc32: z.optional(z.string().check(z.regex(/^[0-9a-f]{8}$/, 'must be 8 lowercase hex digits'))),
  items: InventoryList,
});
export const JournalEntry = z.strictObject({ petId: PetId, quantity: Quantity });

/** `petinv`: the wrapped snapshot serve writes; `array`: a plain JSON array, as `petinv list --json` prints. */
export type DataFileFormat = 'petinv' | 'array';

/* The previous version's journal (docs/serve-durability.md): read as that version read it, folded at once. */

/** A sector: a write a crash cut short left zeros among its bytes that end at a multiple of this. */
const SECTOR_SIZE = 512;
const ZERO_SECTOR = Buffer.alloc(SECTOR_SIZE);

/** Where the first byte other than zero lies in `bytes` from `from`, or -1: a sector at a time where it can. */
function nonZeroFrom(bytes: Buffer, from: number): number {
  let at = from;
  while (at < bytes.length) {
    // A sector cut short by the end of the file is shorter than ZERO_SECTOR, so never equal to it.
    const sector = at % SECTOR_SIZE === 0 ? bytes.subarray(at, at + SECTOR_SIZE) : undefined;
    if (sector?.equals(ZERO_SECTOR)) at += SECTOR_SIZE;
    else if (bytes[at] !== 0) return at;
    else at++;
  }
  return -1;
}

/**
 * Where a journal's complete lines end (at the last line break before the first zero, as a JSON line
 * holds none), and what follows: a torn last line, perhaps with zeros among its bytes. Zeros followed by
 * bytes off a sector's boundary are no crash's: `strayBytesAt` is where those bytes begin.
 */
export function journalExtent(bytes: Buffer) {
  const firstZero = bytes.indexOf(0);
  const written = firstZero === -1 ? bytes.length : firstZero;
  const linesEnd = written === 0 ? 0 : bytes.lastIndexOf(0x0a, written - 1) + 1;
  let unfinishedBytes = written - linesEnd;
  let zerosAt = firstZero;
  while (zerosAt !== -1) {
    const dataAt = nonZeroFrom(bytes, zerosAt);
    if (dataAt === -1) break;
    if (dataAt % SECTOR_SIZE !== 0) return { linesEnd, unfinishedBytes, strayBytesAt: dataAt };
    zerosAt = bytes.indexOf(0, dataAt);
    unfinishedBytes += (zerosAt === -1 ? bytes.length : zerosAt) - dataAt;
  }
  return { linesEnd, unfinishedBytes };
}
