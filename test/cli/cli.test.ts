import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, startInventoryServer } from '../../src/server/start';
import { bulkSummary } from '../helpers/bulk-summary';
import { runMain } from '../helpers/main';
import { closedPort, temporaryDirectory } from '../helpers/serve';

/** The whole CLI, from the command line to the exit status, run in-process through main(argv, io). */

const KEY = 'e2e-key';
let server: RunningServer;
let configDir: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  configDir = temporaryDirectory();
  server = await startInventoryServer({
    port: 0,
    dataFile: join(temporaryDirectory(), 'inventory.json'),
    apiKeys: [KEY],
  });
  env = {
    PETINV_CONFIG_DIR: configDir,
    PETINV_ENV: 'local',
    PETINV_BASE_URL: server.baseUrl,
    PETINV_API_KEY: KEY,
  };
});
afterAll(() => server.close());

const petinv = (args: string[], extra: { env?: NodeJS.ProcessEnv; input?: string } = {}) =>
  runMain(args, { env: { ...env, ...extra.env }, input: extra.input });

describe('petinv list', () => {
  it('prints tab-separated lines in a pipe', async () => {
    const result = await petinv(['list', '--limit', '2']);
    expect(result).toEqual({ code: 0, stdout: '1\tavailable\t12\n2\tpending\t24\n', stderr: '' });
  });
  it('prints --json, --ndjson and --csv', async () => {
    expect((await petinv(['list', '--json', '--limit', '2'])).stdout).toBe(
      '[{"petId":1,"quantity":12,"status":"available"},{"petId":2,"quantity":24,"status":"pending"}]\n',
    );
    expect((await petinv(['list', '--ndjson', '--limit', '2'])).stdout).toBe(
      '{"petId":1,"quantity":12,"status":"available"}\n{"petId":2,"quantity":24,"status":"pending"}\n',
    );
    expect((await petinv(['list', '--csv', '--limit', '2'])).stdout).toBe(
      'petId,status,quantity\n1,available,12\n2,pending,24\n',
    );
  });
  it('filters, sorts, reverses and limits', async () => {
    const result = await petinv([
      'list',
      '--status',
      'sold,pending',
      '--low',
      '10',
      '--sort',
      'quantity',
      '--reverse',
    ]);
    expect(result.stdout).toBe('5\tpending\t10\n9\tsold\t8\n11\tpending\t7\n');
  });
  it('prints a table with --table, coloured only when colour is wanted', async () => {
    const plain = await petinv(['list', '--table', '--limit', '1']);
    expect(plain.stdout).toBe(
      'PET ID  STATUS     QUANTITY\n     1  available        12\n1 pet · 12 units · local\n',
    );
    const forced = await petinv(['list', '--table', '--limit', '1'], { env: { FORCE_COLOR: '1' } });
    expect(forced.stdout).toContain('\u001b[32mavailable\u001b[39m');
    for (const off of [{ FORCE_COLOR: '1', NO_COLOR: '1' }, { FORCE_COLOR: '0' }]) {
      expect((await petinv(['list', '--table', '--limit', '1'], { env: off })).stdout).not.toContain(
        '\u001b[',
      );
    }
    expect(
      (await petinv(['list', '--table', '--limit', '1', '--no-color'], { env: { FORCE_COLOR: '1' } })).stdout,
    ).not.toContain('\u001b[');
  });
  it.each([
    [['--status', 'lost'], '--status lost: "lost" is not one of available, pending, sold'],
    [['--sort', 'name'], '--sort name: must be one of petId, quantity, status'],
    [['--low', '-1'], '--low -1: must be a whole number'],
    [['--csv', '--ndjson'], 'choose one of'],
  ])('rejects list %j as a usage error before any request', async (args, message) => {
    const result = await petinv(['list', ...args], { env: { PETINV_BASE_URL: 'http://127.0.0.1:9/v1' } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
  });
});

describe('int64 petIds in every format', () => {
  it('prints 9223372036854775807 and 9007199254740993 exactly', async () => {
    const data = join(temporaryDirectory(), 'inventory.json');
    writeFileSync(
      data,
      '{"format":"petinv-inventory","version":1,"items":[{"petId":9007199254740993,"quantity":1,"status":"sold"},{"petId":9223372036854775807,"quantity":2,"status":"pending"}]}',
    );
    const big = await startInventoryServer({ port: 0, dataFile: data, apiKeys: [KEY] });
    const run = (args: string[]) => petinv(args, { env: { PETINV_BASE_URL: big.baseUrl } });
    expect((await run(['list'])).stdout).toBe('9007199254740993\tsold\t1\n9223372036854775807\tpending\t2\n');
    expect((await run(['list', '--json'])).stdout).toBe(
      '[{"petId":9007199254740993,"quantity":1,"status":"sold"},{"petId":9223372036854775807,"quantity":2,"status":"pending"}]\n',
    );
    expect((await run(['list', '--ndjson'])).stdout).toContain('{"petId":9223372036854775807,');
    expect((await run(['list', '--csv'])).stdout).toContain('\n9007199254740993,sold,1\n');
    expect((await run(['list', '--table'])).stdout).toContain('9223372036854775807  pending');
    expect((await run(['set', '9223372036854775807', '5', '--json'])).stdout).toBe(
      '{"petId":9223372036854775807,"quantity":5,"status":"pending"}\n',
    );
    expect((await run(['adjust', '9007199254740993', '+1'])).stdout).toBe('9007199254740993\t1\t2\n');
    await big.close();
  });
});

describe('petinv set and adjust', () => {
  it('sets one pet and prints the updated item', async () => {
    expect(await petinv(['set', '6', '30'])).toEqual({ code: 0, stdout: '6\tsold\t30\n', stderr: '' });
    expect((await petinv(['set', '6', '31', '--json'])).stdout).toBe(
      '{"petId":6,"quantity":31,"status":"sold"}\n',
    );
  });
  it('adjusts by a delta, read then write: petId<TAB>before<TAB>after in a pipe', async () => {
    await petinv(['set', '7', '10']);
    expect(await petinv(['adjust', '7', '+5'])).toEqual({ code: 0, stdout: '7\t10\t15\n', stderr: '' });
    expect((await petinv(['adjust', '7', '-2'])).stdout).toBe('7\t15\t13\n');
  });
  it('adjust says the change in words on a terminal, and prints one object with --json', async () => {
    await petinv(['set', '7', '10']);
    const onTerminal = await runMain(['adjust', '7', '+5'], { env, tty: true });
    expect(onTerminal.stdout).toBe('7: 10 → 15\n');
    expect(JSON.parse((await petinv(['adjust', '7', '-2', '--json'])).stdout)).toEqual({
      petId: 7,
      from: 15,
      to: 13,
      item: { petId: 7, quantity: 13, status: 'available' },
    });
  });
  it.each([
    [['set', 'abc', '1'], 'petId "abc" is not a whole number'],
    [
      ['set', '9223372036854775808', '1'],
      'petId "9223372036854775808" is larger than a petId can be (at most 9223372036854775807)',
    ],
    [['set', '1', '1.5'], 'quantity "1.5" is not a whole number'],
    [['set', '1', 'many'], 'quantity "many" is not a whole number'],
    [['adjust', '1', 'x'], 'delta "x" is not an integer'],
    [['set', '1'], 'give a petId and a quantity'],
  ])('checks %j before sending anything', async (args, message) => {
    // The base URL is a closed port: a request would fail with exit 7, not 2.
    const result = await petinv(args, { env: { PETINV_BASE_URL: 'http://127.0.0.1:9/v1' } });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(new RegExp(`^petinv: ${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
  });
});

describe('bulk set', () => {
  it('applies a file of valid lines and prints a summary', async () => {
    const file = join(temporaryDirectory(), 'counts.txt');
    writeFileSync(file, '1 100\n2,200\n3\t300\n');
    const result = await petinv(['set', '--file', file]);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(
      /^petinv: updated 3 of 3 pets in local in [\d.]+s; \d+ changed, 0 already right, 0 failed, 0 conflicts, 0 lines skipped\n$/,
    );
    expect((await petinv(['list', '--limit', '3'])).stdout).toBe(
      '1\tavailable\t100\n2\tpending\t200\n3\tsold\t300\n',
    );
  });

  it('reports bad lines and failed updates by line number, applies the rest, and exits 9', async () => {
    const result = await petinv(['set', '-'], { input: '1 101\nnot a line\n424242 5\n2 -1\n3 301\n' });
    expect(result.code).toBe(9);
    expect(result.stderr).toContain('petinv: line 2: expected "petId quantity", got 3 fields (skipped)\n');
    expect(result.stderr).toContain('petinv: line 3: pet 424242 not found in local (404 pet_not_found');
    expect(result.stderr).toContain(
      'petinv: line 4: the service rejected PATCH /inventory/2 in local (400 invalid_body: quantity: must not be negative)',
    );
    expect(result.stderr).toContain('updated 2 of 4 pets in local');
    expect((await petinv(['list', '--limit', '3'])).stdout).toBe(
      '1\tavailable\t101\n2\tpending\t200\n3\tsold\t301\n',
    );
  });

  it('--strict sends nothing when a line is bad', async () => {
    const result = await petinv(['set', '-', '--strict'], { input: '1 555\nbad\n' });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--strict: 1 bad line; nothing was sent');
    expect((await petinv(['list', '--limit', '1'])).stdout).toBe('1\tavailable\t101\n');
  });

  it('--dry-run shows each change against current stock and writes nothing', async () => {
    const result = await petinv(['set', '-', '--dry-run'], { input: '1 7\n2 200\n424242 1\n' });
    // The real run's update of 424242 would fail with 404: exit 9, as it would.
    expect(result.code).toBe(9);
    expect(result.stderr).toContain('dry run: 1 pet is not in the inventory; nothing was written to local');
    expect(result.stderr).toContain('1 change against local, 1 unknown pet, 1 already right, 0 conflicts');
    // Pet 2 already holds 200: nothing to send, so it is no step of the plan.
    expect(result.stdout).toBe('1: 101 → 7\n424242: not in the inventory of local\n');
    expect((await petinv(['list', '--limit', '1'])).stdout).toBe('1\tavailable\t101\n');
  });

  it('--dry-run --json is one JSON array of planned changes', async () => {
    const result = await petinv(['set', '-', '--dry-run', '--json'], { input: '1 7\n424242 1\n' });
    expect(JSON.parse(result.stdout)).toEqual([
      { petId: 1, from: 101, to: 7, found: true },
      { petId: 424242, from: null, to: 1, found: false },
    ]);
  });

  it('takes `petinv list --json`, changed, on stdin, and streams results with --ndjson', async () => {
    const listed = JSON.parse((await petinv(['list', '--json', '--status', 'sold'])).stdout);
    const zeroed = JSON.stringify(listed.map((item: object) => ({ ...item, quantity: 0 })));
    const result = await petinv(['set', '-', '--ndjson', '--concurrency', '2'], { input: zeroed });
    expect(result.code).toBe(0);
    const results = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(results).toHaveLength(listed.length);
    expect(
      results.every(
        (entry: { ok: boolean; item: { quantity: number } }) => entry.ok && entry.item.quantity === 0,
      ),
    ).toBe(true);
    expect((await petinv(['list', '--status', 'sold', '--csv'])).stdout).not.toMatch(/,[1-9]\d*\n/);
  });
});

describe('exit codes', () => {
  it('2: usage', async () => {
    expect((await petinv(['frobnicate'])).code).toBe(2);
    expect((await petinv(['list', '--frobnicate'])).code).toBe(2);
  });
  it('2: usage with --json is one JSON error line on stderr, commander printing nothing of its own', async () => {
    for (const args of [
      ['--json', 'frobnicate'],
      ['--json', 'list', '--frobnicate'],
      ['list', '--json', '--sort'],
    ]) {
      const result = await petinv(args);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      const lines = result.stderr.split('\n');
      expect(lines).toHaveLength(2);
      expect(lines[1]).toBe('');
      expect(JSON.parse(lines[0] ?? '')).toMatchObject({
        error: { code: 'usage', status: null, exitCode: 2 },
      });
    }
  });
  it('3: configuration, naming what to do', async () => {
    const result = await runMain(['list'], { env: { PETINV_CONFIG_DIR: temporaryDirectory() } });
    expect(result.code).toBe(3);
    expect(result.stderr).toBe(
      'petinv: no base URL for production; set one: petinv env set-url production https://<host>/v1\n',
    );
    const noKey = await runMain(['list', '--env', 'staging', '--base-url', 'https://staging.example/v1'], {
      env: { PETINV_CONFIG_DIR: temporaryDirectory() },
    });
    expect(noKey.code).toBe(3);
    // A key petinv login stores goes only to its environment's own URL: the advice says what does reach this one.
    expect(noKey.stderr).toBe(
      "petinv: no API key for staging (its URL from --base-url); pass that service's key in PETINV_API_KEY, or point staging there and store its key: petinv env set-url staging https://staging.example/v1, then petinv login --env staging\n",
    );
  });
  it('3: a corrupt or invalid config file, named', async () => {
    for (const content of ['{not json', '{"environments":{"staging":{"baseUrl":"not a url"}}}']) {
      const dir = temporaryDirectory();
      writeFileSync(join(dir, 'config.json'), content);
      const result = await runMain(['list'], { env: { PETINV_CONFIG_DIR: dir } });
      expect(result.code).toBe(3);
      expect(result.stderr).toContain(`config file ${join(dir, 'config.json')} is`);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
  });
  it('3: refuses to send a key in clear text to a non-loopback http address unless --insecure', async () => {
    const result = await petinv(['list'], { env: { PETINV_BASE_URL: 'http://inventory.invalid/v1' } });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(
      'refusing to send the API key for local in clear text to http://inventory.invalid/v1',
    );
    const insecure = await petinv(['list', '--insecure', '--retries', '0'], {
      env: { PETINV_BASE_URL: 'http://inventory.invalid/v1' },
    });
    expect(insecure.code).toBe(7);
  });
  it('4: authentication, with advice that fits where the key came from', async () => {
    const result = await petinv(['list'], { env: { PETINV_API_KEY: 'wrong' } });
    expect(result.code).toBe(4);
    // Logging in again would not help: the variable wins over any stored key.
    expect(result.stderr).toBe(
      'petinv: the service refused the API key for local (401 unauthorized: the API key is not valid); the key came from PETINV_API_KEY, which wins over a stored key: fix it, or unset it to use the key stored by petinv login --env local\n',
    );
    const stored = {
      PETINV_CONFIG_DIR: temporaryDirectory(),
      PETINV_ENV: 'qa',
      PETINV_BASE_URL: '',
      PETINV_API_KEY: '',
    };
    expect((await petinv(['env', 'set-url', 'qa', server.baseUrl], { env: stored })).code).toBe(0);
    const login = await petinv(['login', '--no-verify'], { env: stored, input: 'wrong' });
    expect(login.code).toBe(0);
    const refused = await petinv(['list'], { env: stored });
    expect(refused.code).toBe(4);
    expect(refused.stderr).toBe(
      'petinv: the service refused the API key for qa (401 unauthorized: the API key is not valid); run: petinv login --env qa\n',
    );
  });
  it('5: not found', async () => {
    const result = await petinv(['set', '424242', '1']);
    expect(result.code).toBe(5);
    expect(result.stderr).toBe(
      'petinv: pet 424242 not found in local (404 pet_not_found: pet 424242 is not in the inventory)\n',
    );
    expect((await petinv(['adjust', '424242', '+1'])).code).toBe(5);
  });
  it('6: rejected by the service', async () => {
    expect((await petinv(['set', '1', '-1'])).code).toBe(6);
  });
  it('7: network', async () => {
    const port = await closedPort();
    const result = await petinv(['list', '--retries', '0'], {
      env: { PETINV_BASE_URL: `http://127.0.0.1:${port}/v1` },
    });
    expect(result.code).toBe(7);
    expect(result.stderr).toContain(
      `cannot reach http://127.0.0.1:${port}/v1/inventory in local (ECONNREFUSED)`,
    );
  });
  it('8: server error after retries, and timeout', async () => {
    const failing = await startInventoryServer({ port: 0, apiKeys: [KEY], failRate: 1 });
    const result = await petinv(['list', '--retries', '1'], { env: { PETINV_BASE_URL: failing.baseUrl } });
    expect(result.code).toBe(8);
    expect(result.stderr).toContain('(503 unavailable: injected failure (--fail-rate)); try again later');
    await failing.close();
    const slow = await startInventoryServer({ port: 0, apiKeys: [KEY], latency: { min: 400, max: 400 } });
    const timedOut = await petinv(['list', '--retries', '0', '--timeout', '100'], {
      env: { PETINV_BASE_URL: slow.baseUrl },
    });
    expect(timedOut.code).toBe(8);
    expect(timedOut.stderr).toContain('within 100 ms');
    await slow.close();
  });
  it('9: a bulk run that partly failed: every line has its result, the summary and the error are JSON with --json', async () => {
    const result = await petinv(['set', '-', '--json'], { input: '5 55\nnot a line\n424242 1\n' });
    expect(result.code).toBe(9);
    // In the order the results came: a 404 and a durable write race, so compared by input line.
    const results = JSON.parse(result.stdout) as { input: number }[];
    expect(results.sort((a, b) => a.input - b.input)).toEqual([
      { input: 1, ok: true, item: { petId: 5, quantity: 55, status: expect.any(String) } },
      {
        input: 2,
        ok: false,
        skipped: true,
        error: { code: 'bad_input', message: 'expected "petId quantity", got 3 fields', status: null },
      },
      {
        input: 3,
        ok: false,
        petId: 424242,
        quantity: 1,
        error: { code: 'pet_not_found', message: 'pet 424242 is not in the inventory', status: 404 },
      },
    ]);
    expect(
      result.stderr
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line)),
    ).toEqual([
      {
        error: expect.objectContaining({ code: 'partial_failure' }),
        summary: bulkSummary({ updated: 1, changed: 1, failed: 1, skipped: 1 }),
      },
    ]);
    expect((await petinv(['list'])).stdout).toMatch(/^5\t\w+\t55$/m);
  });
  it('a failure of one update is JSON with --json', async () => {
    const result = await petinv(['set', '424242', '1', '--json']);
    expect(result).toMatchObject({ code: 5, stdout: '' });
    expect(JSON.parse(result.stderr)).toEqual({
      error: {
        code: 'pet_not_found',
        message: 'pet 424242 is not in the inventory',
        status: 404,
        exitCode: 5,
      },
    });
  });
});

describe('the API key never travels on the command line', () => {
  it('login takes no key argument', async () => {
    const result = await runMain(['login', 'secret-on-argv'], {
      env: { PETINV_CONFIG_DIR: temporaryDirectory() },
    });
    expect(result.code).toBe(2);
  });
  it('login refuses a key longer than a header should carry, without reading all that is piped', async () => {
    const dir = temporaryDirectory();
    const result = await runMain(['login', '--env', 'staging', '--create'], {
      env: { PETINV_CONFIG_DIR: dir },
      input: 'k'.repeat(8 * 1024 * 1024),
    });
    expect(result.code).toBe(3);
    expect(result.stderr).toBe(
      'petinv: the API key for staging was not stored: it is longer than the 4096 characters an API key may have\n',
    );
    expect(existsSync(join(dir, 'config.json'))).toBe(false);
  });
  it('login reads stdin, and the next command uses it, at the address stored with it', async () => {
    const dir = temporaryDirectory();
    const run = (args: string[]) => runMain(args, { env: { PETINV_CONFIG_DIR: dir } });
    const login = await runMain(['login', '--env', 'local', '--no-verify'], {
      env: { PETINV_CONFIG_DIR: dir },
      input: KEY,
    });
    expect(login.code).toBe(0);
    // The key stored for local belongs to local's built-in address; the test server listens elsewhere.
    const elsewhere = await run(['list', '--limit', '1', '--env', 'local', '--base-url', server.baseUrl]);
    expect(elsewhere.code).toBe(3);
    expect(elsewhere.stderr).toBe(
      `petinv: the API key stored for local belongs to http://127.0.0.1:4010; refusing to send it to ${new URL(server.baseUrl).origin} (from --base-url); pass that service's key in PETINV_API_KEY, or point local there for good, and its stored key with it: petinv env set-url local ${server.baseUrl}\n`,
    );
    // The stored key goes with the environment: a script says so with --yes (see client-truth.test.ts).
    expect((await run(['env', 'set-url', 'local', server.baseUrl, '--yes'])).code).toBe(0);
    expect((await run(['list', '--limit', '1', '--env', 'local'])).code).toBe(0);
    expect((await run(['logout', '--env', 'local'])).code).toBe(0);
    expect((await run(['list', '--env', 'local'])).code).toBe(3);
  });
});

describe('environments', () => {
  it('set-url, use, list, remove', async () => {
    const dir = temporaryDirectory();
    const run = (args: string[]) => runMain(args, { env: { PETINV_CONFIG_DIR: dir } });
    expect((await run(['env', 'set-url', 'staging', 'https://staging.example/v1/'])).code).toBe(0);
    // A bad argument is a usage error, as `env use nowhere` is.
    expect((await run(['env', 'set-url', 'qa', 'https://qa.example/v2'])).code).toBe(2);
    expect((await run(['env', 'use', 'nowhere'])).code).toBe(2);
    expect((await run(['env', 'use', 'staging'])).code).toBe(0);
    expect((await run(['env'])).stdout).toBe(
      '\tproduction\t\tno key\n*\tstaging\thttps://staging.example/v1\tno key\n\tlocal\thttp://127.0.0.1:4010/v1\tno key\n',
    );
    // `env list` too, as the top-level help's "list, set-url, use, remove" reads.
    expect(await run(['env', 'list'])).toEqual(await run(['env']));
    expect(JSON.parse((await run(['config', '--json'])).stdout).env).toEqual({
      value: 'staging',
      source: 'config file',
      from: join(dir, 'config.json'),
    });
    expect((await run(['config', 'path'])).stdout).toBe(`${join(dir, 'config.json')}\n`);
    // On an 80-column terminal the table fits (it was 101 wide); what to do about what is missing follows it, once.
    const table = (
      await runMain(['env'], { env: { PETINV_CONFIG_DIR: dir, NO_COLOR: '1' }, tty: true, columns: 80 })
    ).stdout;
    for (const line of table.split('\n').filter((row) => /^[┌│└]/.test(row)))
      expect(line.length, line).toBeLessThanOrEqual(80);
    expect(table).toContain('│ * │ staging     │ https://staging.example/v1 │ none    │');
    expect(table).toContain(
      'set a base URL: petinv env set-url NAME https://<host>/v1\nstore a key: petinv login --env NAME\n',
    );
    expect((await run(['env', 'remove', 'staging'])).code).toBe(0);
    expect(JSON.parse((await run(['config', '--json'])).stdout).env.value).toBe('production');
  });

  it('a name every JavaScript object answers to (toString, constructor) is no stored environment', async () => {
    const dir = temporaryDirectory();
    const run = (args: string[]) => runMain(args, { env: { PETINV_CONFIG_DIR: dir } });
    for (const name of ['toString', 'constructor', 'hasOwnProperty']) {
      const use = await run(['env', 'use', name]);
      expect(use.code, name).toBe(2);
      expect(use.stderr).toMatch(new RegExp(`^petinv: unknown environment ${name}`));
      const remove = await run(['env', 'remove', name]);
      expect(remove.code, name).toBe(2);
      expect(remove.stderr).toMatch(new RegExp(`^petinv: nothing stored for environment ${name}`));
    }
    // Nothing was chosen that every later command would refuse.
    expect((await run(['env'])).code).toBe(0);
    // One stored in the file, with a key and no URL: no built-in URL either (it crashed on Object's).
    writeFileSync(join(dir, 'config.json'), '{"environments":{"constructor":{"apiKey":"k"}}}', {
      mode: 0o600,
    });
    const config = await run(['--env', 'constructor', 'config', '--json']);
    expect(config.stderr).toBe('');
    expect(JSON.parse(config.stdout).baseUrl.value).toBeNull();
    expect((await run(['--env', 'constructor', 'list'])).stderr).toMatch(
      /^petinv: no base URL for constructor/,
    );
  });
});

// Help's structure: test/cli/help.test.ts.
describe('completion', () => {
  it.each([
    ['bash', 'complete -F _petinv petinv'],
    ['zsh', 'compdef _petinv petinv'],
    ['fish', "complete -c petinv -f -a '(__petinv_complete)'"],
  ])('prints a %s completion script', async (shell, expected) => {
    const result = await petinv(['completion', shell]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(expected);
  });
  it('rejects an unknown shell', async () => {
    expect((await petinv(['completion', 'tcsh'])).code).toBe(2);
  });
});

describe('an empty --env or --base-url', () => {
  it('is a usage error, not the environment a missing flag would pick (an unset shell variable)', async () => {
    const before = await petinv(['get', '1', '--json']);
    for (const flags of [['--env', ''], ['-e', ''], ['--env='], ['--base-url', ''], ['--base-url=']]) {
      const result = await petinv([...flags, 'set', '1', '3']);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/^petinv: --(env|base-url) is empty: give it a value/);
    }
    expect(await petinv(['get', '1', '--json'])).toEqual(before);
  });
});
