import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import { stringifyJson } from '../../src/contract/json';
import { useInventoryServer } from '../helpers/inventory-server';
import { runMain } from '../helpers/main';

const served = useInventoryServer('output-key');
const petinv = (args: string[], tty = false) => runMain(args, { env: served.env, tty });

describe('stringifyJson: the one JSON writer', () => {
  it('writes bigints exactly, drops undefined members, and indents and colours on request', () => {
    const value = { petId: 9223372036854775807n, from: null, to: 3, gone: undefined, list: [1n, 'a"b'] };
    expect(stringifyJson(value)).toBe('{"petId":9223372036854775807,"from":null,"to":3,"list":[1,"a\\"b"]}');
    expect(stringifyJson({ a: [1n], b: {} }, { indent: 2 })).toBe('{\n  "a": [\n    1\n  ],\n  "b": {}\n}');
    const marked = stringifyJson(
      { k: 'v', n: 1n, t: true },
      {
        paint: {
          key: (t) => `<${t}>`,
          string: (t) => `s${t}`,
          number: (t) => `#${t}`,
          literal: (t) => `!${t}`,
        },
      },
    );
    expect(marked).toBe('{<"k">:s"v",<"n">:#1,<"t">:!true}');
  });
});

describe('-o, --fields, --no-headers', () => {
  it('-o picks any format; --json, --ndjson, --csv and --table are its shorthands', async () => {
    for (const [args, shorthand] of [
      [['-o', 'json'], ['--json']],
      [['--output', 'ndjson'], ['--ndjson']],
      [['-o', 'csv'], ['--csv']],
      [['-o', 'table'], ['--table']],
      [['-o', 'tsv'], []],
    ] as const) {
      const long = await petinv(['list', '--limit', '2', ...args]);
      expect(long.code).toBe(0);
      expect(long.stdout).toBe((await petinv(['list', '--limit', '2', ...shorthand])).stdout);
    }
  });

  it('two formats that disagree are a usage error before anything is sent; -o json makes failures JSON', async () => {
    const both = await petinv(['list', '-o', 'csv', '--ndjson']);
    expect(both).toMatchObject({ code: 2, stdout: '' });
    expect(both.stderr).toContain('choose one of -o csv, --ndjson');
    const bad = await petinv(['list', '-o', 'yaml']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--output yaml: must be one of table, tsv, csv, json, ndjson');
    const failed = await runMain(['list', '-o', 'json'], { env: { ...served.env, PETINV_API_KEY: 'wrong' } });
    expect(failed.code).toBe(4);
    expect(JSON.parse(failed.stderr).error.code).toBe('unauthorized');
  });

  it('--fields chooses and orders the columns in every format; an unknown field is a usage error', async () => {
    // TSV in an order that set --file would read as other pets' numbers has a heading, as CSV does.
    expect((await petinv(['list', '--limit', '2', '--fields', 'quantity,petId'])).stdout).toBe(
      'quantity\tpetId\n12\t1\n24\t2\n',
    );
    expect(
      (await petinv(['list', '--limit', '2', '--fields', 'quantity,petId', '--no-headers'])).stdout,
    ).toBe('12\t1\n24\t2\n');
    expect((await petinv(['list', '--limit', '2', '--fields', 'status,petId'])).stdout).toBe(
      'available\t1\npending\t2\n',
    );
    expect((await petinv(['list', '--limit', '1', '--fields', 'quantity,petId', '--json'])).stdout).toBe(
      '[{"quantity":12,"petId":1}]\n',
    );
    expect((await petinv(['list', '--limit', '1', '--fields', 'status', '--csv'])).stdout).toBe(
      'status\navailable\n',
    );
    const unknown = await petinv(['list', '--fields', 'petId,name']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(
      '--fields: "name" is not a field here; choose from petId, status, quantity',
    );
  });

  it('--no-headers leaves out the heading of CSV and the heading and footer of the table', async () => {
    expect((await petinv(['list', '--limit', '1', '--csv', '--no-headers'])).stdout).toBe('1,available,12\n');
    expect((await petinv(['list', '--limit', '2', '--table', '--no-headers', '--no-color'])).stdout).toBe(
      '1  available  12\n2  pending    24\n',
    );
  });

  it('JSON on a terminal is indented (and coloured unless told not to); in a pipe it stays compact', async () => {
    const pretty = await petinv(['list', '--limit', '2', '--json', '--no-color'], true);
    expect(pretty.stdout).toBe(
      '[\n  {\n    "petId": 1,\n    "quantity": 12,\n    "status": "available"\n  },\n  {\n    "petId": 2,\n    "quantity": 24,\n    "status": "pending"\n  }\n]\n',
    );
    const coloured = await petinv(['list', '--limit', '1', '--json'], true);
    expect(coloured.stdout).toContain('\u001b[');
    expect(JSON.parse(stripVTControlCharacters(coloured.stdout))).toEqual([
      { petId: 1, quantity: 12, status: 'available' },
    ]);
    expect((await petinv(['set', '1', '12', '--json', '--no-color'], true)).stdout).toContain(
      '{\n  "petId": 1,',
    );
  });

  it('set prints its item in the chosen format too', async () => {
    expect((await petinv(['set', '2', '24', '-o', 'csv', '--fields', 'petId,quantity'])).stdout).toBe(
      'petId,quantity\n2,24\n',
    );
    expect((await petinv(['set', '2', '24', '-o', 'ndjson'])).stdout).toBe(
      '{"petId":2,"quantity":24,"status":"pending"}\n',
    );
  });
});
