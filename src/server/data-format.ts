import * as z from 'zod/mini';
import { InventoryList, PetId, Quantity } from '../api/schemas';

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
