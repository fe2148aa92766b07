import { z } from 'zod';

/** The contract of ../spec/inventory-service.md, the one source every boundary validates against. */

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

export const PetStatus = z.enum(['available', 'pending', 'sold']);
export type PetStatus = z.infer<typeof PetStatus>;
export const PET_STATUSES = PetStatus.options;

const INTEGER_TEXT = /^-?(0|[1-9][0-9]*)$/;

/** Reads a petId written as decimal text; undefined when it is not an integer within int64. */
export function parsePetId(text: string): bigint | undefined {
  if (!INTEGER_TEXT.test(text) || text.length > 20) return undefined;
  const id = BigInt(text);
  return id >= INT64_MIN && id <= INT64_MAX ? id : undefined;
}

/**
 * petId is int64, wider than a JavaScript number. It is held as a bigint; on the wire it arrives as
 * decimal text (see json.ts), and a library caller may also hand over a bigint or a safe integer.
 */
export const PetId = z.union([z.string(), z.bigint(), z.number()]).transform((value, ctx) => {
  const id =
    typeof value === 'string'
      ? parsePetId(value)
      : typeof value === 'bigint'
        ? value >= INT64_MIN && value <= INT64_MAX
          ? value
          : undefined
        : Number.isSafeInteger(value)
          ? BigInt(value)
          : undefined;
  if (id === undefined) {
    ctx.addIssue({ code: 'custom', message: 'must be an integer within int64' });
    return z.NEVER;
  }
  return id;
});

const integerError = (issue: { input?: unknown }) =>
  issue.input === undefined ? 'is required' : 'must be an integer';

/** The spec gives no bounds; the embedded server accepts 0 to 2^53-1, the integers JSON carries exactly. */
export const Quantity = z
  .number({ error: integerError })
  // .int() would also reject 2^53 as "not an integer"; the bound below says what is really wrong.
  .refine(Number.isInteger, { error: 'must be an integer', abort: true })
  .min(0, { error: 'must not be negative' })
  .max(Number.MAX_SAFE_INTEGER, { error: 'must be at most 2^53-1 (9007199254740991)' });

export const InventoryItem = z.object({
  petId: PetId,
  quantity: z.number({ error: integerError }).int({ error: integerError }),
  status: PetStatus,
});
export type InventoryItem = z.output<typeof InventoryItem>;

export const InventoryList = z.array(InventoryItem);

export const InventoryUpdate = z.strictObject({ quantity: Quantity }, { error: 'must be a JSON object' });
export type InventoryUpdate = z.output<typeof InventoryUpdate>;

export const ApiError = z.object({
  code: z.string(),
  message: z.string(),
  status: z.number().int(),
});
export type ApiError = z.output<typeof ApiError>;

/** One line per problem, each naming the field: `quantity: must be an integer`. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const where = issue.path.length > 0 ? issue.path.join('.') : 'body';
      if (issue.code === 'unrecognized_keys')
        return `${where}: unknown field ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
      return `${where}: ${issue.message}`;
    })
    .join('; ');
}
