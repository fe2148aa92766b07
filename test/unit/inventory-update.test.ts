import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InventoryUpdate, parseInventoryUpdate, QUANTITY_MAX } from '../../src/contract/schemas';

const outcome = (raw: unknown) => {
  const parsed = parseInventoryUpdate(raw);
  return parsed.success ? { data: parsed.data } : { error: parsed.error.issues };
};

const schemaOutcome = (raw: unknown) => {
  const parsed = InventoryUpdate.safeParse(raw);
  return parsed.success ? { data: parsed.data } : { error: parsed.error.issues };
};

describe('parseInventoryUpdate', () => {
  it('answers as the InventoryUpdate schema does, for the usual body and for anything else', () => {
    const quantity = fc.oneof(
      fc.integer(),
      fc.constantFrom(0, -0, 1, QUANTITY_MAX, QUANTITY_MAX + 1, -1, 1.5, Number.NaN, Infinity, 2 ** 53),
      fc.double(),
      fc.string(),
      fc.constant(null),
      fc.boolean(),
      fc.constant(undefined),
    );
    const body = fc.oneof(
      quantity.map((value) => ({ quantity: value })),
      fc.record({ quantity, extra: fc.anything() }),
      fc.dictionary(fc.string(), fc.anything()),
      quantity.map((value) => [value]),
      fc.anything(),
    );
    fc.assert(
      fc.property(body, (raw) => {
        expect(outcome(raw)).toEqual(schemaOutcome(raw));
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses what JSON.parse makes of a __proto__ key beside the quantity', () => {
    const raw = JSON.parse('{"quantity":1,"__proto__":{"quantity":2}}');
    expect(parseInventoryUpdate(raw).success).toBe(false);
    expect(schemaOutcome(raw)).toEqual(outcome(raw));
  });
});
