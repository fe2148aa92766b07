import type { InventoryItem } from '../contract/schemas';
import { MismatchError, PetinvError, QuantityChangedError } from '../errors';
import { isSuccessStatus } from './transport';

/** What a failed write may have left behind, as the client can tell it (issue 21). */

/**
 * Refusals of the request itself (its form, target, size or media type): a lost earlier attempt would have
 * been refused alike, so they still mean "not applied". Any other refusal (401 or 403: the key may have
 * been revoked since; 409, 412, another 4xx, a 5xx) or a redirect says nothing of the lost attempt.
 */
const REFUSES_THE_REQUEST_ITSELF = new Set([400, 404, 405, 406, 411, 413, 414, 415, 422, 431]);

export const refusesTheRequestItself = (status: number) => REFUSES_THE_REQUEST_ITSELF.has(status);

/**
 * Whether a failed update may still have been applied: sent whole and never answered, or answered with a
 * success whose body is not the item sent or too large to read. A bulk run names these apart.
 */
export function maybeApplied({ body: { code, status } }: PetinvError): boolean {
  if (code === 'outcome_unknown') return true;
  return isSuccessStatus(status) && (code === 'invalid_response' || code === 'body_too_large');
}

/**
 * The quantity a failed write of `sent` may have left on its pet, for the history (so that undo takes it
 * back): the service's claim when it answered another, `sent` when unknown, undefined when refused.
 */
export function quantityLeftBy(error: unknown, sent: number): number | undefined {
  if (error instanceof MismatchError) return error.answered;
  if (error instanceof PetinvError && maybeApplied(error)) return sent;
  return undefined;
}

/** Tries of a write that a petinv serve refuses because its pet changed since it was read. */
const TRIES = 3;

/**
 * A write of `to` on condition the pet holds `ifQuantity` (Petinv-If-Quantity, which a petinv serve
 * checks). When it held another, `changed(current)` gives what to write on that quantity now, or
 * undefined for nothing (and then undefined); a pet changed before each of TRIES tries ends in the refusal.
 */
export async function writeOnWhatItHolds(
  client: { updateInventory(petId: bigint, to: number, ifQuantity?: number): Promise<InventoryItem> },
  petId: bigint,
  to: number,
  ifQuantity: number | undefined,
  changed: (current: number) => number | undefined | Promise<number | undefined>,
): Promise<InventoryItem | undefined> {
  for (let tries = 1; ; tries++) {
    try {
      return await client.updateInventory(petId, to, ifQuantity);
    } catch (error) {
      if (!(error instanceof QuantityChangedError) || tries === TRIES) throw error;
      const next = await changed(error.current);
      if (next === undefined) return undefined;
      [to, ifQuantity] = [next, error.current];
    }
  }
}
