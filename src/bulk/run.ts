import type { InventoryItem } from '../api/schemas';
import { PetinvError } from '../errors';
import type { BulkEntry } from './input';

export type BulkResult =
  | { line: number; petId: bigint; quantity: number; ok: true; item: InventoryItem }
  | { line: number; petId: bigint; quantity: number; ok: false; error: PetinvError };

/**
 * Applies every entry with at most `concurrency` updates in flight; a failure is recorded, not thrown,
 * so one bad pet does not stop the rest. Results arrive through `onResult` as they complete.
 */
export async function runBulk(
  entries: readonly BulkEntry[],
  concurrency: number,
  update: (entry: BulkEntry) => Promise<InventoryItem>,
  onResult: (result: BulkResult) => void,
): Promise<BulkResult[]> {
  const results: BulkResult[] = [];
  let next = 0;
  const worker = async () => {
    while (next < entries.length) {
      const entry = entries[next++] as BulkEntry;
      const base = { line: entry.line, petId: entry.petId, quantity: entry.quantity };
      let result: BulkResult;
      try {
        result = { ...base, ok: true, item: await update(entry) };
      } catch (error) {
        const failure =
          error instanceof PetinvError ? error : new PetinvError('internal', (error as Error).message);
        result = { ...base, ok: false, error: failure };
      }
      results.push(result);
      onResult(result);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, entries.length) }, worker));
  return results;
}
