import fc from 'fast-check';
import { isLosslessNumber, parse as parseLossless } from 'lossless-json';
import { describe, expect, it } from 'vitest';
import { parseInventoryStream } from '../../src/client/inventory-stream';
import { parseInventoryJson } from '../../src/contract/json';
import { InventoryItemResponse } from '../../src/contract/schemas';

/**
 * parseInventoryJson against a reference reader, lossless-json, over generated documents: integer-like
 * keys (which objects list first), nesting, duplicate keys, escapes in keys and strings, exponents,
 * fractions, -0, numbers past 2^53, white space anywhere. Any divergence fails (issue 21).
 *
 * The documents are built from a model (entries in document order) and written out as text, so the test
 * knows where a key is written twice in one object: parseInventoryJson must refuse those, and read every
 * other document exactly as lossless-json does, with the contract's reading of numbers laid on top (a
 * petId's integer digits are a bigint, a petId or quantity written otherwise is its text).
 */

type Model =
  | { kind: 'number'; text: string }
  | { kind: 'string'; value: string }
  | { kind: 'literal'; value: boolean | null }
  | { kind: 'array'; elements: Model[] }
  | { kind: 'object'; entries: Array<[string, Model]> };

const JSON_INTEGER = /^-?\d+$/;

const digits = fc.oneof(
  fc.constantFrom('0', '1', '7', '9007199254740991', '9007199254740992', '9007199254740993'),
  fc.constantFrom('9223372036854775807', '9223372036854775808', '18446744073709551616'),
  fc.bigInt({ min: 1n, max: 10n ** 25n }).map(String),
  fc.nat().map(String),
);
const numberText = fc
  .tuple(
    fc.boolean(),
    digits,
    fc.option(fc.stringMatching(/^[0-9]{1,4}$/), { nil: undefined }),
    fc.option(
      fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), fc.integer({ min: 0, max: 30 })),
      {
        nil: undefined,
      },
    ),
  )
  .map(
    ([minus, whole, fraction, exponent]) =>
      `${minus ? '-' : ''}${whole}${fraction === undefined ? '' : `.${fraction}`}${
        exponent === undefined ? '' : `${exponent[0]}${exponent[1]}${exponent[2]}`
      }`,
  );
const key = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('petId', 'quantity', 'status') },
  {
    weight: 4,
    arbitrary: fc.constantFrom('0', '1', '2', '10', '4294967294', '4294967295', '01', '-1', '1.5'),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom('__proto__', 'constructor', 'toString', '', 'pet"Id', 'a\\"petId'),
  },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 6 }) },
);
const text = fc.oneof(
  fc.constantFrom('sold', 'available', '"petId":1', '\u202e', 'a\\b'),
  fc.string({ unit: 'binary', maxLength: 8 }),
);

const { model } = fc.letrec<{ model: Model; item: Model }>((tie) => ({
  model: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 4, arbitrary: numberText.map((t): Model => ({ kind: 'number', text: t })) },
    { weight: 2, arbitrary: text.map((value): Model => ({ kind: 'string', value })) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(true, false, null).map((value): Model => ({ kind: 'literal', value })),
    },
    {
      weight: 2,
      arbitrary: fc
        .array(tie('model'), { maxLength: 4 })
        .map((elements): Model => ({ kind: 'array', elements })),
    },
    { weight: 3, arbitrary: tie('item') },
  ),
  item: fc
    .array(fc.tuple(key, tie('model')), { maxLength: 6 })
    .map((entries): Model => ({ kind: 'object', entries })),
}));

/** White space JSON allows between tokens. */
const gap = fc.constantFrom('', '', '', ' ', '\n', '\t', '\r\n ');

/** Writes a string, each character escaped as \uXXXX or not as `escapes` says (by position). */
function writeString(value: string, escapes: boolean[]): string {
  let out = '"';
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    const plain = JSON.stringify(value[i]).slice(1, -1);
    out += escapes[i % Math.max(escapes.length, 1)] ? `\\u${unit.toString(16).padStart(4, '0')}` : plain;
  }
  return `${out}"`;
}

/** Writes the model as JSON text, with white space and escapes from the `style` pools. */
function write(node: Model, gaps: string[], escapes: boolean[], counter = { at: 0 }): string {
  const space = () => gaps[counter.at++ % gaps.length] ?? '';
  switch (node.kind) {
    case 'number':
      return node.text;
    case 'string':
      return writeString(node.value, escapes.slice(counter.at++ % 3));
    case 'literal':
      return String(node.value);
    case 'array':
      return `[${space()}${node.elements.map((element) => `${space()}${write(element, gaps, escapes, counter)}${space()}`).join(',')}]`;
    case 'object':
      return `{${space()}${node.entries
        .map(
          ([name, value]) =>
            `${space()}${writeString(name, escapes.slice(counter.at++ % 5))}${space()}:${space()}${write(value, gaps, escapes, counter)}${space()}`,
        )
        .join(',')}}`;
  }
}

function hasDuplicateKey(node: Model): boolean {
  if (node.kind === 'array') return node.elements.some(hasDuplicateKey);
  if (node.kind !== 'object') return false;
  const names = node.entries.map(([name]) => name);
  return new Set(names).size !== names.length || node.entries.some(([, value]) => hasDuplicateKey(value));
}

/** lossless-json's value with the contract's reading of numbers: what parseInventoryJson must give. */
function contractReading(value: unknown, name?: string): unknown {
  if (isLosslessNumber(value)) {
    const digitsText = value.value;
    if (name === 'petId') return JSON_INTEGER.test(digitsText) ? BigInt(digitsText) : digitsText;
    if (name === 'quantity' && !JSON_INTEGER.test(digitsText)) return digitsText;
    return Number(digitsText);
  }
  if (Array.isArray(value)) return value.map((element) => contractReading(element));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [member, inner] of Object.entries(value)) {
      Object.defineProperty(out, member, {
        value: contractReading(inner, member),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return value;
}

/** Numbers compared with Object.is (so -0 is not 0), bigints by value, objects by their own keys. */
function same(a: unknown, b: unknown): boolean {
  if (typeof a !== typeof b) return false;
  if (typeof a === 'number') return Object.is(a, b);
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => same(x, b[i]));
  if (a !== null && typeof a === 'object') {
    if (b === null || Array.isArray(b)) return false;
    const aKeys = Object.keys(a);
    const bKeys = Object.keys(b as object);
    return (
      aKeys.length === bKeys.length &&
      aKeys.every(
        (k) =>
          Object.hasOwn(b as object, k) &&
          same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
      )
    );
  }
  return a === b;
}

const document = fc.record({
  root: model,
  gaps: fc.array(gap, { minLength: 1, maxLength: 7 }),
  escapes: fc.array(fc.boolean(), { minLength: 1, maxLength: 5 }),
});

describe('parseInventoryJson against lossless-json (property)', () => {
  it('reads every generated document as the reference does, and refuses a key written twice', () => {
    fc.assert(
      fc.property(document, ({ root, gaps, escapes }) => {
        const json = write(root, gaps, escapes);
        if (hasDuplicateKey(root)) {
          expect(() => parseInventoryJson(json), json).toThrow(/is written twice in one object/);
          return;
        }
        const expected = contractReading(parseLossless(json));
        const actual = parseInventoryJson(json);
        if (!same(actual, expected)) expect(actual, json).toEqual(expected);
      }),
      { numRuns: 3000 },
    );
  });

  it('refuses what lossless-json and JSON.parse refuse: text cut short or spoilt', () => {
    fc.assert(
      fc.property(
        document,
        fc.nat(),
        fc.constantFrom('', ',', '}', ']', '"', '01', '-', '\u0001'),
        (doc, at, junk) => {
          const whole = write(doc.root, doc.gaps, doc.escapes);
          const cut = at % (whole.length + 1);
          const json = whole.slice(0, cut) + junk + whole.slice(cut + (junk === '' ? 1 : 0));
          let reference: 'refused' | 'read' = 'read';
          try {
            JSON.parse(json);
            parseLossless(json);
          } catch {
            reference = 'refused';
          }
          if (reference === 'refused') expect(() => parseInventoryJson(json), json).toThrow(SyntaxError);
          else if (!hasDuplicateKeyText(json)) expect(() => parseInventoryJson(json), json).not.toThrow();
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("pairs each petId with its own digits when an item has integer-like keys (the issue's case)", () => {
    const json =
      '[{"petId":9007199254740993,"quantity":1,"status":"sold","0":{"petId":9007199254740992,"quantity":1}}]';
    expect(parseInventoryJson(json)).toEqual([
      { petId: 9007199254740993n, quantity: 1, status: 'sold', 0: { petId: 9007199254740992n, quantity: 1 } },
    ]);
  });
});

/**
 * Whether valid JSON text writes a key twice in one object, whatever the values (lossless-json reports only
 * duplicates with different values): a scan of its tokens, keys decoded by JSON.parse.
 */
function hasDuplicateKeyText(json: string): boolean {
  const objects: Array<Set<string> | undefined> = [];
  for (let at = 0; at < json.length; at++) {
    const char = json[at];
    if (char === '{') objects.push(new Set());
    else if (char === '[') objects.push(undefined);
    else if (char === '}' || char === ']') objects.pop();
    else if (char === '"') {
      let end = at + 1;
      while (json[end] !== '"') end += json[end] === '\\' ? 2 : 1;
      const after = json.slice(end + 1).trimStart();
      const keys = objects.at(-1);
      if (keys && after.startsWith(':')) {
        const name = JSON.parse(json.slice(at, end + 1)) as string;
        if (keys.has(name)) return true;
        keys.add(name);
      }
      at = end;
    }
  }
  return false;
}

describe('parseInventoryStream against lossless-json (property)', () => {
  const petIdText = fc.oneof(
    fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String),
    fc.constantFrom('9007199254740993', '9007199254740992', '-0', '0', '9223372036854775807'),
  );
  const extra = fc.array(
    fc.tuple(
      fc.constantFrom('0', '1', '10', 'note', 'pet"Id'),
      fc.oneof(
        petIdText.map((id) => `{"petId":${id},"quantity":1}`),
        fc.constantFrom('1e3', '-0', '"x"', '[1,{"quantity":2}]', 'null'),
      ),
    ),
    { maxLength: 2 },
  );
  const element = fc
    .tuple(
      petIdText,
      fc.nat({ max: 10_000 }),
      fc.constantFrom('available', 'pending', 'sold'),
      extra,
      fc.boolean(),
      fc.boolean(),
    )
    .map(([petId, quantity, status, extras, spaced, escaped]) => {
      const members = [
        `"petId":${petId}`,
        `"quantity":${quantity}`,
        `"status":"${status}"`,
        ...extras
          .filter(([name], i) => extras.findIndex(([other]) => other === name) === i)
          .map(([name, value]) => `${JSON.stringify(name)}:${value}`),
      ];
      if (escaped) members[0] = `"pet\\u0049d":${petId}`;
      return `{${members.join(spaced ? ' , ' : ',')}}`;
    });

  it('hands out the items lossless-json reads, cut anywhere', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(element, { maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 4 }),
        async (elements, cutAt) => {
          const json = `[${elements.join(',')}]`;
          const expected = (contractReading(parseLossless(json)) as unknown[]).map((item) =>
            InventoryItemResponse.parse(item),
          );
          const bytes = Buffer.from(json);
          const cuts = [...new Set(cutAt.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
          const chunks: Uint8Array[] = [];
          let from = 0;
          for (const cut of [...cuts, bytes.length]) {
            chunks.push(bytes.subarray(from, cut));
            from = cut;
          }
          const items: unknown[] = [];
          for await (const batch of parseInventoryStream(chunks)) items.push(...batch);
          expect(items, json).toEqual(expected);
        },
      ),
      { numRuns: 500 },
    );
  });
});
