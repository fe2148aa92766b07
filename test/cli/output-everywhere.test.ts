import { beforeAll, describe, expect, it } from 'vitest';
import { useInventoryServer } from '../helpers/inventory-server';
import { answer, startFakeServer } from '../helpers/lying-server';
import { runMain } from '../helpers/main';

/**
 * -o, --fields and --no-headers on every command that prints data (env, config, status, summary, adjust,
 * dry runs, bulk results), each against a real server on port 0 whose log proves what was sent.
 */

const KEY = 'output-everywhere-key';
const served = useInventoryServer(KEY);
const { requests } = served;
let env: NodeJS.ProcessEnv;
beforeAll(() => {
  env = { ...served.env };
});

const petinv = (args: string[], options: { tty?: boolean; input?: string } = {}) =>
  runMain(args, { env, ...options });
const lines = (text: string) => text.trimEnd().split('\n');
const quantityOf = async (petId: number) => {
  const list = JSON.parse((await petinv(['list', '--json'])).stdout) as { petId: number; quantity: number }[];
  return list.find((item) => item.petId === petId)?.quantity;
};

describe('env', () => {
  it('prints its rows in every format; --fields and --no-headers apply; JSON keeps its shape', async () => {
    const tsv = await petinv(['env']);
    expect(lines(tsv.stdout)[0]).toBe('\tproduction\t\tno key');
    expect((await petinv(['env', '-o', 'tsv'])).stdout).toBe(tsv.stdout);
    const csv = lines((await petinv(['env', '-o', 'csv'])).stdout);
    expect(csv[0]).toBe('current,name,baseUrl,hasKey');
    expect(csv[1]).toBe(',production,,no key');
    expect((await petinv(['env', '-o', 'csv', '--no-headers'])).stdout).toBe(`${csv.slice(1).join('\n')}\n`);
    expect(lines((await petinv(['env', '--fields', 'name,hasKey'])).stdout)[1]).toBe('staging\tno key');
    const json = await petinv(['env', '-o', 'json']);
    expect(json.stdout).toBe((await petinv(['env', '--json'])).stdout);
    expect(JSON.parse(json.stdout)[0]).toEqual({
      name: 'production',
      current: false,
      baseUrl: null,
      hasKey: false,
    });
    expect(lines((await petinv(['env', '-o', 'ndjson'])).stdout)[0]).toBe(
      '{"name":"production","current":false,"baseUrl":null,"hasKey":false}',
    );
    const table = await petinv(['env', '-o', 'table', '--fields', 'name', '--no-headers', '--no-color']);
    expect(table.stdout).toContain('│ production │');
    expect(table.stdout).not.toContain('ENVIRONMENT');
    expect(table.stdout).not.toContain('current:');
    const unknown = await petinv(['env', '--fields', 'name,url']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('"url" is not a field here; choose from current, name, baseUrl, hasKey');
  });

  it('JSON on a terminal is indented', async () => {
    expect((await petinv(['env', '--json', '--no-color'], { tty: true })).stdout).toMatch(
      /^\[\n {2}\{\n {4}"name": "production",\n/,
    );
  });
});

describe('config and status', () => {
  it('config: the report by default, a row per setting with -o; --fields with its JSON object is a usage error', async () => {
    expect((await petinv(['config'])).stdout).toMatch(/^env {6}local/);
    const tsv = (await petinv(['config', '-o', 'tsv'])).stdout.split('\n');
    expect(tsv[0]).toBe('env\tlocal\tenvironment variable\tPETINV_ENV');
    expect(tsv[1]).toBe(`baseUrl\t${served.server.baseUrl}\tenvironment variable\tPETINV_BASE_URL`);
    expect(tsv[2]).toMatch(/^apiKey\toutp… \(21 characters\)\tenvironment variable\tPETINV_API_KEY$/);
    expect(tsv.slice(3)).toEqual([`configFile\t${env.PETINV_CONFIG_DIR}/config.json\t\t`, '']);
    expect((await petinv(['config', '--fields', 'setting,source', '-o', 'csv'])).stdout).toMatch(
      /^setting,source\nenv,environment variable\n/,
    );
    expect(JSON.parse(lines((await petinv(['config', '-o', 'ndjson'])).stdout)[0] ?? '')).toEqual({
      setting: 'env',
      value: 'local',
      source: 'environment variable',
      from: 'PETINV_ENV',
    });
    const shaped = await petinv(['config', '--json', '--fields', 'value']);
    expect(shaped).toMatchObject({ code: 2, stdout: '' });
    expect(JSON.parse(shaped.stderr).error.message).toContain('--fields does not apply to config in json');
  });

  it('TSV escapes a tab, a line break and a backslash in a value, so that a row stays one line of cells', async () => {
    const directory = `${env.PETINV_CONFIG_DIR}/odd\tname\nwith\\`;
    const result = await runMain(['config', '-o', 'tsv'], { env: { ...env, PETINV_CONFIG_DIR: directory } });
    const rows = result.stdout.split('\n');
    expect(rows).toHaveLength(5);
    expect(rows[4]).toBe('');
    expect(rows[3]).toBe(`configFile\t${env.PETINV_CONFIG_DIR}/odd\\tname\\nwith\\\\/config.json\t\t`);
  });

  it('status: a row per setting and one for the service; a bad --fields sends nothing', async () => {
    const csv = await petinv(['status', '-o', 'csv']);
    expect(csv.code).toBe(0);
    const rows = lines(csv.stdout);
    expect(rows[0]).toBe('setting,value,source,from');
    expect(rows).toContain(`keyStored,false,config file,${env.PETINV_CONFIG_DIR}/config.json`);
    expect(rows.at(-1)).toMatch(/^service,ok,service,12 pets in \d+(\.\d)? ms$/);
    expect(requests).toEqual(['GET /v1/inventory']);

    requests.length = 0;
    const unknown = await petinv(['status', '-o', 'tsv', '--fields', 'setting,latency']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(
      '"latency" is not a field here; choose from setting, value, source, from',
    );
    const shaped = await petinv(['status', '-o', 'json', '--fields', 'value']);
    expect(shaped.code).toBe(2);
    expect(requests).toEqual([]);
  });
});

describe('summary', () => {
  it('a row per status with -o; JSON keeps its object; the table has headings and a footer', async () => {
    const summary = JSON.parse((await petinv(['summary', '--json'])).stdout);
    const expected = (['available', 'pending', 'sold'] as const).map(
      (status) => `${status}\t${summary.statuses[status].pets}\t${summary.statuses[status].units}`,
    );
    expect(lines((await petinv(['summary', '-o', 'tsv'])).stdout)).toEqual(expected);
    expect((await petinv(['summary', '-o', 'csv', '--fields', 'units,status'])).stdout).toBe(
      `units,status\n${expected
        .map((line) =>
          line
            .split('\t')
            .reverse()
            .filter((_, i) => i !== 1)
            .join(','),
        )
        .join('\n')}\n`,
    );
    const table = lines((await petinv(['summary', '-o', 'table', '--no-color'])).stdout);
    expect(table[0]).toMatch(/^STATUS {5}PETS {2}UNITS$/);
    expect(table.at(-1)).toBe(`${summary.pets} pets · ${summary.units} units · local`);
    // Without -o a pipe still gets the report's lines.
    expect((await petinv(['summary'])).stdout).toMatch(/^12 pets · /);
    requests.length = 0;
    const shaped = await petinv(['summary', '--json', '--fields', 'units']);
    expect(shaped.code).toBe(2);
    expect(requests).toEqual([]);
  });
});

describe('adjust', () => {
  it('TSV petId, before, after in a pipe; any format with -o; the item in JSON only', async () => {
    const before = (await quantityOf(5)) as number;
    const piped = await petinv(['adjust', '5', '+1']);
    expect(piped.stdout).toBe(`5\t${before}\t${before + 1}\n`);
    expect((await petinv(['adjust', '5', '+1', '-o', 'csv', '--fields', 'petId,to'])).stdout).toBe(
      `petId,to\n5,${before + 2}\n`,
    );
    const json = JSON.parse((await petinv(['adjust', '5', '-2', '-o', 'json'])).stdout);
    expect(json).toEqual({
      petId: 5,
      from: before + 2,
      to: before,
      item: { petId: 5, quantity: before, status: json.item.status },
    });
    expect((await petinv(['adjust', '5', '+0', '-o', 'ndjson', '--fields', 'to,item'])).stdout).toBe(
      `{"to":${before},"item":{"petId":5,"quantity":${before},"status":"${json.item.status}"}}\n`,
    );
    const table = await petinv(['adjust', '5', '+0', '-o', 'table', '--no-color'], { tty: true });
    expect(lines(table.stdout)).toEqual([
      'PET ID  BEFORE  AFTER',
      `     5  ${String(before).padStart(6)}  ${String(before).padStart(5)}`,
    ]);
    expect((await petinv(['adjust', '5', '+0'], { tty: true })).stdout).toBe(`5: ${before} → ${before}\n`);

    requests.length = 0;
    const itemInTsv = await petinv(['adjust', '5', '+1', '-o', 'tsv', '--fields', 'petId,item']);
    expect(itemInTsv.code).toBe(2);
    expect(itemInTsv.stderr).toContain('"item" is not a field here; choose from petId, from, to');
    expect(requests).toEqual([]);
  });
});

describe('dry runs', () => {
  it('a row per change with -o; the JSON shapes stay; --fields with them is a usage error', async () => {
    const q1 = (await quantityOf(1)) as number;
    expect((await petinv(['set', '1', '5', '--dry-run', '-o', 'csv'])).stdout).toBe(
      `petId,from,to,found\n1,${q1},5,true\n`,
    );
    expect((await petinv(['adjust', '1', '+3', '--dry-run', '-o', 'tsv'])).stdout).toBe(
      `1\t${q1}\t${q1 + 3}\ttrue\n`,
    );
    const input = '1 5\n9223372036854775807 7\n';
    const tsv = await petinv(['set', '-', '--dry-run', '-o', 'tsv', '--fields', 'petId,found'], { input });
    expect(tsv.stdout).toBe('1\ttrue\n9223372036854775807\tfalse\n');
    expect((await petinv(['set', '-', '--dry-run', '-o', 'ndjson'], { input })).stdout).toBe(
      (await petinv(['set', '-', '--dry-run', '--ndjson'], { input })).stdout,
    );
    // The one JSON writer keeps an int64 petId exact.
    expect((await petinv(['set', '-', '--dry-run', '--json'], { input })).stdout).toBe(
      `[{"petId":1,"from":${q1},"to":5,"found":true},{"petId":9223372036854775807,"from":null,"to":7,"found":false}]\n`,
    );
    requests.length = 0;
    for (const args of [
      ['set', '1', '5', '--dry-run', '--json', '--fields', 'to'],
      ['set', '-', '--dry-run', '-o', 'ndjson', '--fields', 'to'],
      ['adjust', '1', '+1', '--dry-run', '-o', 'tsv', '--fields', 'status'],
    ]) {
      const refused = await petinv(args, { input });
      expect(refused.code).toBe(2);
    }
    expect(requests).toEqual([]);
  });
});

describe('bulk results', () => {
  it('a row per result as it completes, then those never sent; --ndjson and --json keep their shapes', async () => {
    const input = '2 31\n424242 1\nnot a line\n3 -1\n';
    const tsv = await petinv(['set', '-', '-o', 'tsv', '--concurrency', '1', '--pipelining', '1'], { input });
    expect(tsv.code).toBe(9);
    expect(lines(tsv.stdout)).toEqual([
      '1\tupdated\t2\t31\tpending\t\t',
      '2\tfailed\t424242\t1\t\tpet_not_found\tpet 424242 is not in the inventory',
      expect.stringMatching(/^4\tfailed\t3\t-1\t\tinvalid_body\t/),
    ]);
    expect(tsv.stderr).toMatch(/line 3: .*\(skipped\)/);
    // --all: pet 2 already holds 31 now, and only --all sends a row that changes nothing.
    const csv = await petinv(
      ['set', '-', '-o', 'csv', '--fields', 'input,result', '--concurrency', '1', '--all'],
      { input },
    );
    expect(csv.stdout).toBe('input,result\n1,updated\n2,failed\n4,failed\n');
    expect((await petinv(['set', '-', '-o', 'ndjson', '--concurrency', '1'], { input })).stdout).toBe(
      (await petinv(['set', '-', '--ndjson', '--concurrency', '1'], { input })).stdout,
    );
    const table = await petinv(['set', '-', '-o', 'table', '--no-color', '--concurrency', '1'], { input });
    expect(lines(table.stdout)[0]).toMatch(/^INPUT +RESULT +PET ID +QUANTITY +STATUS +ERROR +MESSAGE$/);

    requests.length = 0;
    for (const args of [
      ['set', '-', '--json', '--fields', 'input'],
      ['set', '-', '-o', 'tsv', '--fields', 'item'],
      ['set', '-', '-o', 'csv', '--ndjson'],
    ]) {
      const refused = await petinv(args, { input });
      expect(refused.code).toBe(2);
    }
    expect(requests).toEqual([]);
  });

  it('a run stopped early ends its rows with the entries never sent', async () => {
    // A service that lists its pets but refuses the key for every write: the run stops at the first 401.
    const refusing = await startFakeServer((req, res) =>
      (req.method === 'GET'
        ? answer(200, '[{"petId":1,"quantity":0,"status":"sold"},{"petId":2,"quantity":0,"status":"sold"}]')
        : answer(401, '{"code":"unauthorized","message":"the API key is not valid"}'))(req, res),
    );
    const refused = await runMain(['set', '-', '-o', 'tsv', '--concurrency', '1', '--pipelining', '1'], {
      env: { ...env, PETINV_BASE_URL: `${refusing.origin}/v1` },
      input: '1 1\n2 2\n3 3\n',
    });
    await refusing.close();
    expect(refused.code).toBe(4);
    expect(refused.stdout.split('\n')).toEqual([
      expect.stringMatching(/^1\tfailed\t1\t1\t\thttp_401\t/),
      '2\tnot sent\t2\t2\t\t\t',
      '3\tnot sent\t3\t3\t\t\t',
      '',
    ]);
  });

  it('without -o a run prints nothing on stdout, as before', async () => {
    const result = await petinv(['set', '-'], { input: '2 24\n' });
    expect(result).toMatchObject({ code: 0, stdout: '' });
  });
});
