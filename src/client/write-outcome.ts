import { MismatchError, PetinvError } from '../errors';
import { isSuccessStatus } from './transport';

/**
 * What a failed write may have left behind, as the client can tell it (issue 21): a write sent whole with
 * no answer, or answered with a success that cannot be believed, may have been applied; one answered with
 * another quantity left what the service claims.
 */

/**
 * Refusals of the request itself (its form, target, size or media type): the same request, sent before and
 * lost, would have been refused alike, so after a lost attempt they still mean "not applied". Any other
 * refusal (a 401 or 403: the key may have been revoked after the lost attempt was applied; 409, 412, an
 * unknown 4xx, a 5xx) may be about what happened since, and a redirect says nothing of what became of the
 * lost attempt (it may have been applied before the move).
 */
const REFUSES_THE_REQUEST_ITSELF = new Set([400, 404, 405, 406, 411, 413, 414, 415, 422, 431]);

export const refusesTheRequestItself = (status: number) => REFUSES_THE_REQUEST_ITSELF.has(status);

/**
 * Whether a failed update may still have been applied: sent whole and never answered, or answered with a
 * success whose body is not the item sent (not JSON, another pet) or too large to read (client.ts,
 * no-answer-errors.ts). A bulk run counts these as unknown and names them apart from the rows not applied.
 */
export function maybeApplied({ body: { code, status } }: PetinvError): boolean {
  if (code === 'outcome_unknown') return true;
  return isSuccessStatus(status) && (code === 'invalid_response' || code === 'body_too_large');
}

/**
 * The quantity a failed write of `sent` may have left on its pet, for the history (so that undo takes it
 * back): the service's own claim when it answered with another quantity, the quantity sent when the
 * outcome is unknown; undefined when the write was refused and left nothing.
 */
export function quantityLeftBy(error: unknown, sent: number): number | undefined {
  if (error instanceof MismatchError) return error.answered;
  if (error instanceof PetinvError && maybeApplied(error)) return sent;
  return undefined;
}
