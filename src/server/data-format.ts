import * as z from 'zod/mini';
import { InventoryList, PetId, Quantity } from '../contract/schemas';

/** The data file's two formats on disk, read and written: the snapshot's wrapper and the journal's lines. */

const FORMAT = 'petinv-inventory';
/** A snapshot is these bytes, then the very body GET /inventory serves, then SNAPSHOT_SUFFIX. */
export const SNAPSHOT_PREFIX = Buffer.from(`{"format":"${FORMAT}","version":1,"items":`);
export const SNAPSHOT_SUFFIX = Buffer.from('}\n');

export const Snapshot = z.object({ format: z.literal(FORMAT), version: z.literal(1), items: InventoryList });
export const JournalEntry = z.strictObject({ petId: PetId, quantity: Quantity });

/** `petinv`: the wrapped snapshot serve writes; `array`: a plain JSON array, as `petinv list --json` prints. */
export type DataFileFormat = 'petinv' | 'array';

/** One journal line per change: an absolute quantity, so replaying a line twice changes nothing. */
export const journalLines = (changes: readonly { petId: bigint; quantity: number }[]): Buffer =>
  Buffer.from(changes.map((item) => `{"petId":${item.petId},"quantity":${item.quantity}}\n`).join(''));

/**
 * The unit a disk writes whole (a sector): a write a crash cut short reached the disk in such units, so a
 * stretch of zeros it left in the middle of its bytes ends at a multiple of this.
 */
const SECTOR_SIZE = 512;
const ZERO_SECTOR = Buffer.alloc(SECTOR_SIZE);

/** Where the first byte other than zero lies in `bytes` from `from`, or -1: a sector at a time where it can. */
function nonZeroFrom(bytes: Buffer, from: number): number {
  let at = from;
  while (at < bytes.length) {
    if (at % SECTOR_SIZE === 0 && at + SECTOR_SIZE <= bytes.length) {
      if (bytes.subarray(at, at + SECTOR_SIZE).equals(ZERO_SECTOR)) {
        at += SECTOR_SIZE;
        continue;
      }
    }
    if (bytes[at] !== 0) return at;
    at++;
  }
  return -1;
}

/**
 * Where a journal's complete lines end, and what follows them. Appends are written over zeros laid down
 * ahead of them (journal.ts), and a JSON line never holds a zero byte: the lines end where the zeros
 * begin, at their last line break. After that comes what a write cut short by a crash left: part of a
 * line, and perhaps more of its bytes after a stretch of zeros it never wrote, never acknowledged either.
 * A stretch of zeros with bytes after it that does not end at a sector's boundary is not that:
 * `strayBytesAt` is then where those bytes begin (the journal was cut short while serve ran, say).
 */
export function journalExtent(bytes: Buffer): {
  linesEnd: number;
  unfinishedBytes: number;
  strayBytesAt?: number;
} {
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
