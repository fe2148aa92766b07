import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InventoryStreamError, parseInventoryStream } from '../../src/client/inventory-stream';
import { parseInventoryJson } from '../../src/contract/json';
import { describeIssues, InventoryItemResponse } from '../../src/contract/schemas';

/** Feeds `text` in pieces cut at `cuts` (as bytes, so a cut may fall inside a UTF-8 character). */
async function* pieces(text: string, cuts: number[]): AsyncGenerator<Uint8Array> {
  const bytes = Buffer.from(text);
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    yield bytes.subarray(from, cut);
    from = cut;
  }
}

async function collect(chunks: AsyncIterable<Uint8Array | string> | Iterable<string>) {
  const batches: unknown[][] = [];
  try {
    for await (const batch of parseInventoryStream(chunks)) batches.push(batch);
  } catch (error) {
    return { batches, error: error as InventoryStreamError };
  }
  return { batches, error: undefined };
}

const item = (petId: string, quantity: number | string = 1, status = 'sold') =>
  `{"petId":${petId},"quantity":${quantity},"status":"${status}"}`;

describe('parseInventoryStream', () => {
  const extremes = `[${item('9223372036854775807')},${item('-9223372036854775808', 0, 'available')},${item('9007199254740993', 9007199254740991, 'pending')}]`;

  it('reads petIds exactly as bigints, cut at every byte', async () => {
    const expected = [
      { petId: 9223372036854775807n, quantity: 1, status: 'sold' },
      { petId: -9223372036854775808n, quantity: 0, status: 'available' },
      { petId: 9007199254740993n, quantity: 9007199254740991, status: 'pending' },
    ];
    for (let cut = 0; cut <= extremes.length; cut++) {
      const { batches, error } = await collect(pieces(extremes, [cut]));
      expect(error, `cut at ${cut}`).toBeUndefined();
      expect(batches.flat(), `cut at ${cut}`).toEqual(expected);
    }
  });

  it('reads any other JSON form of an item as parseInventoryJson does: white space, key order, escapes', async () => {
    const text = ` [ {"status" : "sold", "petId": 9007199254740993 ,"quantity":2} ,\n${item('5')},{"petId":6,"quantity":3,"status":"s\\u006fld","note":"a, ] \\" }"}\t] \n`;
    const whole = parseInventoryJson(text) as Array<Record<string, unknown>>;
    for (let cut = 0; cut <= text.length; cut += 3) {
      const { batches, error } = await collect(pieces(text, [cut, Math.min(cut + 7, text.length)]));
      expect(error, `cut at ${cut}`).toBeUndefined();
      // The schema keeps the contract's fields only, as for a whole answer.
      expect(batches.flat()).toEqual(
        whole.map(({ petId, quantity, status }) => ({ petId, quantity, status })),
      );
    }
  });

  it('an empty list is no batch at all', async () => {
    expect(await collect(['[', ' ]\n'])).toEqual({ batches: [], error: undefined });
  });

  it('holds each batch until the next piece is read, so a body that breaks in its first piece hands out nothing', async () => {
    const { batches, error } = await collect([`[${item('1')},${item('2')},{"petId":3,"qua`]);
    expect(batches).toEqual([]);
    expect(error).toBeInstanceOf(InventoryStreamError);
    expect(error?.message).toBe('not JSON (the body ends before its array is closed, after 2 items)');
  });

  it('a body cut mid-item after earlier pieces: the earlier items came out, then the error', async () => {
    const { batches, error } = await collect([`[${item('1')},`, `${item('2')},`, '{"petId":3,"qua']);
    expect(batches.flat()).toHaveLength(1);
    expect(error?.message).toMatch(/ends before its array is closed/);
  });

  it('checks the contract item by item and names the item by its place in the whole list', async () => {
    const first = Array.from({ length: 1500 }, (_, i) => item(String(i + 1))).join(',');
    const { batches, error } = await collect([
      `[${first},`,
      `${item('1501')},`,
      `${item('1502', 1, 'lost')}]`,
    ]);
    expect(batches.flat()).toHaveLength(1500);
    expect(error?.message).toBe('1501.status: must be one of available, pending, sold');
    for (const [bad, message] of [
      [item('9223372036854775808'), '0.petId: must be an integer within int64'],
      ['{"petId":"5","quantity":1,"status":"sold"}', '0.petId: must be a JSON integer'],
      [item('5', '9007199254740993'), '0.quantity: must be an integer a double holds exactly'],
      ['{"petId":1,"quantity":1.0,"status":"sold"}', '0.quantity: must be a JSON integer'],
      [
        '{"petId":1,"petId":2,"quantity":1,"status":"sold"}',
        'the key "petId" is written twice in one object',
      ],
      ['{"petId":01,"quantity":1,"status":"sold"}', 'not JSON'],
      ['7', '0: must be object'],
    ] as const) {
      expect((await collect([`[${bad}]`])).error?.message, bad).toContain(message);
    }
  });

  it.each([
    ['', 'not JSON (the body is empty)'],
    ['{"items":[]}', 'body: must be array'],
    ['oops', 'not JSON (it does not start with [)'],
    [`[${item('1')}] [`, 'not JSON (more text after the array)'],
    [`[${item('1')},,${item('2')}]`, 'not JSON (an empty element in the array)'],
    [`[${item('1')},]`, 'not JSON (a comma before the end of the array)'],
    [`[${item('1')} ${item('2')}]`, 'not JSON (unexpected "{" after item 1)'],
    [`[${item('1')}}`, 'not JSON (unexpected "}" after item 1)'],
    ['[}]', 'not JSON (an unbalanced "}")'],
    ['[{"petId":1,"quantity":1,"status":"sold"]}]', 'not JSON ('],
  ])('refuses %j', async (text, message) => {
    const { error } = await collect([text]);
    expect(error).toBeInstanceOf(InventoryStreamError);
    expect(error?.message).toContain(message);
  });

  it('checks an item of the usual form by hand exactly as the schema does, at and around every bound', async () => {
    // Digits the usual form's expression reads (up to 19 of petId, 16 of quantity), biased to the bounds.
    const digits = (most: number, bounds: string[]) =>
      fc.oneof(
        fc.constantFrom(...bounds),
        fc.bigInt({ min: 0n, max: 10n ** BigInt(most) - 1n }).map(String),
        fc.integer({ min: 1, max: most }).map((length) => '9'.repeat(length)),
      );
    const petId = fc.tuple(
      fc.boolean(),
      digits(19, ['0', '9223372036854775807', '9223372036854775808', '9223372036854775809']),
    );
    const quantity = fc.tuple(
      fc.boolean(),
      digits(16, ['0', '9007199254740991', '9007199254740992', '9007199254740993']),
    );
    const status = fc.constantFrom('available', 'pending', 'sold');
    await fc.assert(
      fc.asyncProperty(petId, quantity, status, async ([petIdMinus, petIdDigits], [minus, digits], state) => {
        const text = item(`${petIdMinus ? '-' : ''}${petIdDigits}`, `${minus ? '-' : ''}${digits}`, state);
        const schema = InventoryItemResponse.safeParse((parseInventoryJson(`[${text}]`) as unknown[])[0]);
        const { batches, error } = await collect([`[${text}]`]);
        if (schema.success) {
          expect(error, text).toBeUndefined();
          expect(batches.flat(), text).toEqual([schema.data]);
        } else {
          expect(batches, text).toEqual([]);
          expect(error?.message, text).toBe(describeIssues(schema.error, [0]));
        }
      }),
      { numRuns: 2000 },
    );
  });
});
