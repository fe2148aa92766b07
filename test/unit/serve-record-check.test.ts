import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkServeRecord, usualServeRecord } from '../../src/config/serve-records';

/** A serve record checked by hand (the usual one serve writes) against the schema that decides the rest. */

const written = {
  version: 1,
  pid: 4242,
  host: 'till-3',
  boot: '0b6f3c5e-6a43-4f3c-9d43-1f0d6f2b3a11',
  start: '123456',
  baseUrl: 'http://127.0.0.1:43117/v1',
  apiKey: 'k-local',
  dataFile: '/home/ann/.local/share/petinv/inventory.json',
  readOnly: false,
  startedAt: '2026-11-26T00:10:00.000Z',
};

describe('a serve record checked by hand', () => {
  const odd = fc.oneof(
    fc.string({ maxLength: 4 }),
    fc.integer(),
    fc.double(),
    fc.constantFrom(null, true, false, 0, -0, 1, 2, -1, 1.5, 2 ** 53, ''),
    fc.array(fc.integer(), { maxLength: 1 }),
  );
  const field = (value: unknown) => fc.oneof({ weight: 3, arbitrary: fc.constant(value) }, odd);
  const record = fc.oneof(
    fc.record(
      Object.fromEntries(Object.entries(written).map(([key, value]) => [key, field(value)])) as {
        [K in keyof typeof written]: fc.Arbitrary<unknown>;
      },
      { requiredKeys: ['version', 'pid', 'host', 'baseUrl', 'apiKey', 'dataFile', 'readOnly', 'startedAt'] },
    ),
    fc
      .tuple(fc.constantFrom('extra', '__proto__', 'constructor', 'pid'), odd)
      // A computed key makes an own property, __proto__ too, as JSON.parse does.
      .map(([key, value]) => ({ ...written, [key]: value })),
    odd,
  );

  it('accepts only what the schema accepts, and gives what it gives', () => {
    let accepted = 0;
    fc.assert(
      fc.property(record, (raw) => {
        const parsed: unknown = JSON.parse(JSON.stringify(raw));
        const usual = usualServeRecord(parsed);
        if (usual === undefined) return;
        accepted++;
        const schema = checkServeRecord(parsed);
        expect(schema.success).toBe(true);
        expect(usual).toEqual(schema.data);
        expect(JSON.stringify(usual)).toBe(JSON.stringify(schema.data));
      }),
      { numRuns: 3000 },
    );
    expect(accepted).toBeGreaterThan(50);
  });

  it('takes the record serve writes, with and without its optional fields', () => {
    expect(usualServeRecord(written)).toEqual(written);
    const { boot: _boot, start: _start, ...older } = written;
    expect(usualServeRecord(older)).toEqual(older);
    // A field it does not know is left to the schema, which drops it.
    expect(usualServeRecord({ ...written, port: 1 })).toBeUndefined();
    expect(checkServeRecord({ ...written, port: 1 }).data).toEqual(written);
  });
});
