import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readQuantity } from '../../src/bulk/numbers';
import { bulkSummary } from '../helpers/bulk-summary';
import { useInventoryServer } from '../helpers/inventory-server';
import { runMain } from '../helpers/main';
import { temporaryDirectory } from '../helpers/serve';

const KEY = 'bulk-input-key';
const served = useInventoryServer(KEY);

const petinv = (args: string[], input?: string) => runMain(args, { env: served.env, input });

/** The pet's quantity as the service now lists it. */
async function quantityOf(petId: number): Promise<number | undefined> {
  const line = (await petinv(['list'])).stdout.split('\n').find((row) => row.startsWith(`${petId}\t`));
  return line === undefined ? undefined : Number(line.split('\t')[2]);
}

describe('bulk input', () => {
  it('refuses binary input, such as --file /dev/zero (exit 2)', async () => {
    const result = await petinv(['set', '--file', '/dev/zero']);
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'petinv: bulk input is a binary file, not text: save it as CSV (comma, semicolon or tab separated) or as an Excel workbook (.xlsx). Nothing was sent (run petinv help set)\n',
    });
  });

  it('accepts a byte-order mark before a JSON array', async () => {
    const file = join(temporaryDirectory(), 'counts.json');
    writeFileSync(file, '\ufeff[{"petId":10,"quantity":3}]');
    const result = await petinv(['set', '--file', file, '--ndjson']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      input: 1,
      ok: true,
      item: { petId: 10, quantity: 3, status: 'available' },
    });
  });
});

describe('a quantity is read by one rule, for one pet and in bulk', () => {
  // The text a request body would carry: a JSON integer. A sign other than "-" or leading zeros are
  // not one, and both ways in answer alike (`set 1 +5` was once accepted while a bulk line was not),
  // saying in plain words what is wrong.
  it.each(['+5', '007', '1.5', '1e3', '0x10', '9007199254740992', '-9007199254740992', ''])(
    'refuses %j both ways with the same message, sending nothing',
    async (text) => {
      const message = readQuantity(text, 'quantity') as string;
      expect(message).toMatch(/^quantity ".*" (is|has) /);
      expect(message).not.toMatch(/JSON|int64|integer/);
      const before = await quantityOf(10);
      const one = await petinv(['set', '10', text]);
      expect(one).toMatchObject({ code: 2, stdout: '' });
      expect(one.stderr).toBe(`petinv: ${message} (run petinv help set)\n`);
      const bulk = await petinv(['set', '-', '--strict'], `10,${text}\n`);
      expect(bulk).toMatchObject({ code: 2, stdout: '' });
      expect(bulk.stderr).toContain(`petinv: line 1 (pet 10): ${message}\n`);
      expect(await quantityOf(10)).toBe(before);
    },
  );

  it.each([
    ['0', 0],
    ['42', 42],
    ['9007199254740991', 9007199254740991],
  ])('accepts %j both ways', async (text, quantity) => {
    expect((await petinv(['set', '10', text])).stdout).toBe(`10\tavailable\t${quantity}\n`);
    await petinv(['set', '10', '1']);
    expect((await petinv(['set', '-'], `10 ${text}\n`)).code).toBe(0);
    expect(await quantityOf(10)).toBe(quantity);
  });

  it('passes a negative quantity on both ways: the spec leaves its sign to the service', async () => {
    const one = await petinv(['set', '10', '-1']);
    const bulk = await petinv(['set', '-', '--ndjson'], '10 -1\n');
    expect(one.code).toBe(6);
    expect(one.stderr).toMatch(/400 invalid_body/);
    expect(bulk.code).toBe(9);
    expect(JSON.parse(bulk.stdout).error).toMatchObject({ code: 'invalid_body', status: 400 });
  });
});

describe('bulk results', () => {
  const input = '10 4\nnot a line\n424242 1\n[broken\n';

  it('--ndjson: every failure is a result, skipped lines first; the input position and the item have their own keys', async () => {
    const result = await petinv(['set', '-', '--ndjson'], input);
    expect(result.code).toBe(9);
    const results = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(results.slice(0, 2)).toEqual([
      {
        input: 2,
        ok: false,
        skipped: true,
        error: { code: 'bad_input', message: 'expected "petId quantity", got 3 fields', status: null },
      },
      {
        input: 4,
        ok: false,
        skipped: true,
        error: { code: 'bad_input', message: 'expected "petId quantity", got 1 field', status: null },
      },
    ]);
    expect(results.slice(2).sort((a, b) => a.input - b.input)).toEqual([
      { input: 1, ok: true, item: { petId: 10, quantity: 4, status: 'available' } },
      {
        input: 3,
        ok: false,
        petId: 424242,
        quantity: 1,
        error: expect.objectContaining({ code: 'pet_not_found', status: 404 }),
      },
    ]);
    // What `jq 'select(.ok | not)'` would pick: every failure, skipped input included.
    expect(results.filter((entry) => !entry.ok).map((entry) => entry.input)).toEqual([2, 4, 3]);
    // Failures are in the stream, not repeated on stderr.
    expect(result.stderr).toMatch(
      /^petinv: updated 1 of 2 pets in local in [\d.]+s; \d+ changed, 0 already right, 1 failed, 0 conflicts, 2 lines skipped\n/,
    );
  });

  it('--json: one array with the same results, a JSON array input keyed by position too', async () => {
    const result = await petinv(
      ['--json', 'set', '-'],
      '[{"petId":11,"quantity":2},{"petId":"x","quantity":1}]',
    );
    expect(result.code).toBe(9);
    expect(JSON.parse(result.stdout)).toEqual([
      {
        input: 2,
        ok: false,
        skipped: true,
        error: { code: 'bad_input', message: 'petId: must be an integer within int64', status: null },
      },
      { input: 1, ok: true, item: { petId: 11, quantity: 2, status: 'pending' } },
    ]);
    // A run that skipped input fails (exit 9): one line, the summary beside the error.
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(JSON.parse(result.stderr)).toEqual({
      error: expect.objectContaining({ code: 'partial_failure', exitCode: 9 }),
      summary: bulkSummary({ updated: 1, changed: 1, skipped: 1 }),
    });
  });

  it('--json and --ndjson together are a usage error', async () => {
    expect((await petinv(['--json', 'set', '-', '--ndjson'], '1 1\n')).code).toBe(2);
  });
});
