/**
 * The contract's rules that need no validator, which schemas.ts builds on: kept apart so that a command
 * that needs only these (`petinv list`) starts without building every schema, about 1 ms of a cold start.
 */

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

/** The statuses in the spec's order, which is also the order `--sort status` uses. */
export const PET_STATUSES = ['available', 'pending', 'sold'] as const;
export type PetStatus = (typeof PET_STATUSES)[number];

/** A JSON integer as the contract writes one: an optional minus, no `+`, no leading zeros. */
const INTEGER_TEXT = /^-?(0|[1-9][0-9]*)$/;

/** What a petId is, for messages: `petId "x" is not ${PET_ID_RULE}`. */
export const PET_ID_RULE = 'an integer within int64';

export function parsePetId(text: string): bigint | undefined {
  if (text.length > 20 || !INTEGER_TEXT.test(text)) return undefined;
  return toPetId(BigInt(text));
}

export const comparePetIds = (a: bigint, b: bigint): number => (a < b ? -1 : a > b ? 1 : 0);

/** The largest quantity the contract carries: JSON numbers hold integers exactly up to 2^53-1. */
export const QUANTITY_MAX = Number.MAX_SAFE_INTEGER;

/**
 * Reads a quantity written as text (`petinv set 42 7`, a bulk line) as the request body will carry it, so
 * `+5` or `007` are refused everywhere. The sign is the service's to judge (the spec does not say).
 */
export function parseQuantity(text: string): number | undefined {
  if (text.length > 17 || !INTEGER_TEXT.test(text)) return undefined;
  const quantity = Number(text);
  return Math.abs(quantity) <= QUANTITY_MAX ? quantity : undefined;
}

/** A petId as a library caller may hand one over: decimal text, a bigint or a safe integer. */
export function toPetId(value: string | bigint | number): bigint | undefined {
  if (typeof value === 'string') return parsePetId(value);
  if (typeof value === 'bigint') return value >= INT64_MIN && value <= INT64_MAX ? value : undefined;
  return Number.isSafeInteger(value) ? BigInt(value) : undefined;
}
