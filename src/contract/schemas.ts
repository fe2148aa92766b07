import * as z from 'zod/mini';
import { INT64_MAX, INT64_MIN, PET_ID_RULE, PET_STATUSES, QUANTITY_MAX, toPetId } from './rules';

export { describeIssues } from './issues';
export { INT64_MAX, INT64_MIN, PET_STATUSES, parsePetId, QUANTITY_MAX } from './rules';

/** The spec's contract, which every boundary validates against: zod/mini, a fraction of classic zod's start-up. */

export const PetStatus = z.enum(PET_STATUSES);
export type PetStatus = z.infer<typeof PetStatus>;

/** petId is int64, held as a bigint: decimal text, or from a library caller a bigint or a safe integer. */
export const PetId = z.pipe(
  z.union([z.string(), z.bigint(), z.number()], { error: `must be ${PET_ID_RULE}` }),
  z.transform((value, ctx) => {
    const id = toPetId(value);
    if (id !== undefined) return id;
    ctx.issues.push({ code: 'custom', message: `must be ${PET_ID_RULE}`, input: value });
    return z.NEVER;
  }),
);

const requiredOr = (problem: string) => (issue: { input?: unknown }) =>
  issue.input === undefined ? 'is required' : problem;
const integerError = requiredOr('must be an integer');
// z.int() would also call 2^53 "not an integer"; the bound of Quantity says what is really wrong.
const isInteger = z.refine(Number.isInteger, { error: 'must be an integer', abort: true });

const isExactQuantity = z.refine<number>((quantity) => Math.abs(quantity) <= QUANTITY_MAX, {
  error: 'must be an integer a double holds exactly (at most 2^53-1, 9007199254740991)',
});

/** The spec gives no bounds; the embedded server accepts 0 to 2^53-1, the integers JSON carries exactly. */
export const Quantity = z
  .number({ error: integerError })
  .check(
    isInteger,
    z.minimum(0, { error: 'must not be negative' }),
    z.maximum(QUANTITY_MAX, { error: 'must be at most 2^53-1 (9007199254740991)' }),
  );

/** A quantity a client may send or receive: an integer a double holds exactly; its sign is the service's to judge. */
export const QuantityValue = z.number({ error: integerError }).check(isInteger, isExactQuantity);

export const InventoryItem = z.object({
  petId: PetId,
  // Exact, as a client requires: serve never holds a quantity it could not list (a data file's 2^53 + 1).
  quantity: QuantityValue,
  status: PetStatus,
});
export type InventoryItem = z.output<typeof InventoryItem>;

export const InventoryList = z.array(InventoryItem);

const wireIntegerError = requiredOr('must be a JSON integer');

/**
 * What the client accepts from a service: only a bigint is a petId (parseInventoryJson leaves `"5"` or
 * `5.0` as they were), and a quantity must be one a double holds exactly.
 */
export const InventoryItemResponse = z.object({
  petId: z
    .bigint({ error: wireIntegerError })
    .check(z.refine((id) => id >= INT64_MIN && id <= INT64_MAX, { error: `must be ${PET_ID_RULE}` })),
  quantity: z.number({ error: wireIntegerError }).check(isInteger, isExactQuantity),
  status: PetStatus,
});

export const InventoryUpdate = z.strictObject({ quantity: Quantity }, { error: 'must be a JSON object' });
export type InventoryUpdate = z.output<typeof InventoryUpdate>;

/**
 * InventoryUpdate.safeParse for the server's PATCH path: the usual body is taken as it is, anything else
 * goes to the schema, which words what is wrong (a property test holds both to the same answers).
 */
export function parseInventoryUpdate(raw: unknown): ReturnType<typeof InventoryUpdate.safeParse> {
  if (typeof raw === 'object' && raw !== null && !Array.isArray(raw)) {
    const { quantity } = raw as { quantity?: unknown };
    // A safe integer is one at most QUANTITY_MAX (2^53-1) from zero.
    if (Number.isSafeInteger(quantity) && (quantity as number) >= 0 && Object.keys(raw).length === 1)
      return { success: true, data: { quantity: quantity as number } };
  }
  return InventoryUpdate.safeParse(raw);
}

export const ApiError = z.object({
  code: z.string(),
  message: z.string(),
  status: z.number().check(isInteger),
});
export type ApiError = z.output<typeof ApiError>;
