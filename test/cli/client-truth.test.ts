import { describe, expect, it } from 'vitest';
import { rawAnswer as answer, BREAKS, type RawRequest, useRawServer } from '../helpers/lying-server';
import { runMain } from '../helpers/main';
import { closedPort, runPetinv, temporaryDirectory } from '../helpers/serve';

/**
 * Issue 21: the client believes no answer it should doubt. A raw TCP server on port 0 lies or breaks in
 * the ways a real service can (the first path segment picks how), and the real CLI runs against it.
 */

/** A request, `seen` counting the requests of its scenario before it (the list read a write makes first aside). */
type Exchange = RawRequest;

const ITEMS = [
  { petId: 5, quantity: 3, status: 'sold' },
  { petId: 6, quantity: 4, status: 'available' },
  { petId: 5, quantity: 9, status: 'pending' },
];
const FORMULAS = ['=HYPERLINK("http://evil","x")', '+cmd', '-2+3', '@SUM(1)', '\tlead', '\rlead'];
const list = (items: readonly object[]) => JSON.stringify(items);
/** The item a PATCH asks for, as an honest service answers it. */
const honest = ({ path, body }: Exchange) => ({
  petId: Number(path.split('/').at(-1)),
  quantity: JSON.parse(body).quantity as number,
  status: 'sold',
});

const scenarios: Record<string, (exchange: Exchange) => void> = {
  /** Answers every PATCH with one more than it was sent; pet 7 honestly. */
  lying(exchange) {
    if (exchange.method === 'GET')
      return answer(
        exchange.socket,
        200,
        list([
          { petId: 7, quantity: 1, status: 'sold' },
          { petId: 8, quantity: 1, status: 'sold' },
        ]),
      );
    const item = honest(exchange);
    if (item.petId !== 7) item.quantity += 1;
    answer(exchange.socket, 200, JSON.stringify(item));
  },
  twice(exchange) {
    if (exchange.method === 'GET') return answer(exchange.socket, 200, list(ITEMS));
    answer(exchange.socket, 200, JSON.stringify(honest(exchange)));
  },
  /** Refuses every PATCH with words a spreadsheet would run, picked by the quantity sent. */
  formula(exchange) {
    const quantity = JSON.parse(exchange.body).quantity as number;
    const words = FORMULAS[Math.abs(quantity) % FORMULAS.length] as string;
    answer(exchange.socket, 400, JSON.stringify({ code: words, message: words, status: 400 }));
  },
  /** Refuses with a message that hides the key between invisible characters, and turns its text around. */
  invisible(exchange) {
    const split = 'truth-test-key'.split('').join('\u200b');
    const message = `key ${split} refused \u202eevil\u202c \u2067petinv: ok\u2069 soft\u00adhyphen \ufeffbom`;
    answer(
      exchange.socket,
      400,
      JSON.stringify({ code: 'bad\u200bcode', message, status: 400 }),
      `X-Key: ${split}\r\n`,
    );
  },
  /** Answers with the key in its status line, split by invisible characters (UTF-8 bytes). */
  'invisible-status'(exchange) {
    const split = 'truth-test-key'.split('').join('\u200b');
    exchange.socket.end(
      `HTTP/1.1 400 ${split}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`,
    );
  },
  /** A whole answer on a kept connection, then bytes that begin no other answer, in the same write. */
  trailing(exchange) {
    const body = JSON.stringify(honest(exchange));
    exchange.socket.write(
      `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body} JUNK`,
    );
  },
  /** The item: an integer-like key, which objects list first, holding another petId. */
  'integer-keys'(exchange) {
    answer(
      exchange.socket,
      200,
      '[{"petId":9007199254740993,"quantity":1,"status":"sold","0":{"petId":9007199254740992,"quantity":1}}]',
    );
  },
  /** Answers 200, then closes the connection in the middle of the item. */
  'body-broke-off'(exchange) {
    exchange.socket.end(
      'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"petId":42,',
    );
  },
  /** Answers 200 and the start of the item, then nothing more. */
  'body-stalls'(exchange) {
    exchange.socket.write(
      'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"petId":42,',
    );
  },
  /** Answers the list 206 Partial Content: some of it, as if it were all. */
  partial(exchange) {
    answer(exchange.socket, 206, list([{ petId: 1, quantity: 3, status: 'sold' }]));
  },
  /** Answers a PATCH 202 Accepted (taken, not necessarily done), with the item sent. */
  accepted(exchange) {
    answer(exchange.socket, 202, JSON.stringify(honest(exchange)));
  },
  /** Answers a PATCH 200 with a body that is no item. */
  'not-an-item'(exchange) {
    answer(exchange.socket, 200, 'hello');
  },
  /** Answers a PATCH 200 with a body larger than the --max-body-size the tests give (2K). */
  'too-large'(exchange) {
    answer(exchange.socket, 200, JSON.stringify({ ...honest(exchange), padding: 'x'.repeat(5000) }));
  },
  /** Reads every request whole and never answers. */
  silent() {},
  /** Every request, the list read a write makes first included, is read whole and its connection reset. */
  'reset-all'(exchange) {
    exchange.socket.resetAndDestroy();
  },
  /** The list read is reset; a PATCH is answered honestly. */
  'list-reset'(exchange) {
    if (exchange.method === 'GET') return exchange.socket.resetAndDestroy();
    answer(exchange.socket, 200, JSON.stringify(honest(exchange)));
  },
  /** The first PATCH is read whole and its connection reset; later ones are answered. */
  'reset-once'(exchange) {
    if (exchange.seen === 0) return exchange.socket.resetAndDestroy();
    answer(exchange.socket, 200, JSON.stringify(honest(exchange)));
  },
};
for (const [name, breakIt] of Object.entries(BREAKS))
  scenarios[`break-${name}`] = ({ socket }) => breakIt(socket);

/** The scenarios that answer the list themselves. */
const LIST_SCENARIOS = new Set(['lying', 'twice', 'integer-keys', 'reset-all', 'list-reset', 'partial']);

const counts = new Map<string, number>();
const patches: string[] = [];

const server = useRawServer(({ method, path, body, socket }) => {
  const scenario = path.split('/')[1] ?? '';
  // A write reads the inventory first (its before-value, for the history and undo): a scenario about
  // writes answers that read with an empty list, uncounted, and lies or breaks on the write alone.
  if (method === 'GET' && !LIST_SCENARIOS.has(scenario)) return answer(socket, 200, '[]');
  const seen = counts.get(scenario) ?? 0;
  counts.set(scenario, seen + 1);
  if (method === 'PATCH') patches.push(`${scenario} ${path} ${body}`);
  scenarios[scenario]?.({ method, path, body, socket, seen });
});
const origin = () => server.origin;

const petinv = (scenario: string, args: string[], input?: string) =>
  runMain(args, {
    env: {
      PETINV_CONFIG_DIR: temporaryDirectory(),
      PETINV_ENV: 'staging',
      PETINV_BASE_URL: `${origin()}/${scenario}/v1`,
      PETINV_API_KEY: 'truth-test-key',
    },
    input,
  });

describe('a PATCH answered with another quantity than sent is a mismatch (exit 12)', () => {
  it('set: both numbers, never "updated", nothing on stdout', async () => {
    const result = await petinv('lying', ['set', '42', '7']);
    expect(result.code).toBe(12);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      'petinv: mismatch: pet 42 in staging was sent quantity 7, but the service answered PATCH /inventory/42 (200) with quantity 8; what it holds now is not known: read it back with petinv get 42 --env staging before going on\n',
    );
    const json = await petinv('lying', ['--json', 'set', '42', '7']);
    expect(json.code).toBe(12);
    expect(JSON.parse(json.stderr).error).toMatchObject({ code: 'mismatch', status: 200, exitCode: 12 });
  });

  it('adjust: reads 1, sends 3, is answered 4', async () => {
    const result = await petinv('lying', ['adjust', '8', '2']);
    expect(result.code).toBe(12);
    expect(result.stderr).toContain('pet 8 in staging was sent quantity 3, but the service answered');
    expect(result.stderr).toContain('with quantity 4');
  });

  it('a bulk run counts its mismatches in the summary and exits 12', async () => {
    const result = await petinv('lying', ['--json', 'set', '-'], '7 5\n8 6\n9 1\n');
    expect(result.code).toBe(12);
    const results = JSON.parse(result.stdout) as Array<{ ok: boolean; error?: { code: string } }>;
    expect(results.map((entry) => entry.ok)).toEqual([true, false, false]);
    expect(results[1]?.error?.code).toBe('mismatch');
    // A failing --json run: one line on stderr, the summary beside the error.
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    const failure = JSON.parse(result.stderr);
    expect(failure.summary).toMatchObject({ updated: 1, failed: 2, mismatched: 2, unknown: 0 });
    expect(failure.error).toMatchObject({ code: 'mismatch', exitCode: 12 });
    const text = await petinv('lying', ['set', '-'], '7 5\n8 6\n');
    expect(text.code).toBe(12);
    expect(text.stderr).toContain('1 failed (1 answered with another quantity)');
  });
});

describe('a write that may have been applied, or was answered with another quantity, is in the history', () => {
  /** Runs petinv with a history of its own, and returns what the history then holds for the scenario. */
  async function withHistory(scenario: string, runs: [string[], string?][]) {
    const env = {
      PETINV_CONFIG_DIR: temporaryDirectory(),
      XDG_STATE_HOME: temporaryDirectory(),
      PETINV_ENV: 'staging',
      PETINV_BASE_URL: `${origin()}/${scenario}/v1`,
      PETINV_API_KEY: 'truth-test-key',
    };
    const codes: number[] = [];
    for (const [args, input] of runs) codes.push((await runMain(args, { env, input })).code);
    const history = JSON.parse((await runMain(['history', '--json'], { env })).stdout) as {
      command: string;
      changes: { petId: number; before: number | null; after: number }[];
      marks: string[];
    }[];
    return { codes, history: history.map(({ command, changes, marks }) => ({ command, changes, marks })) };
  }

  it('with what the service says it holds after a mismatch, so undo takes it back', async () => {
    const { codes, history } = await withHistory('lying', [
      [['set', '8', '5']],
      [['adjust', '8', '2']],
      [['set', '-'], '7 5\n8 6\n'],
    ]);
    expect(codes).toEqual([12, 12, 12]);
    expect(history).toEqual(
      expect.arrayContaining([
        // Marked failed, as a bulk run with such an answer is.
        { command: 'set 8 5', changes: [{ petId: 8, before: 1, after: 6 }], marks: ['failed'] },
        { command: 'adjust 8 2', changes: [{ petId: 8, before: 1, after: 4 }], marks: ['failed'] },
      ]),
    );
    const bulk = history.find((run) => run.command.startsWith('set -') || run.command.includes('--file'));
    expect(bulk?.changes).toEqual(
      expect.arrayContaining([
        { petId: 7, before: 1, after: 5 },
        { petId: 8, before: 1, after: 7 },
      ]),
    );
  });
});

describe('each petId is read from its own digits', () => {
  it.each([
    [['list'], '9007199254740993\tsold\t1\n'],
    [['list', '--csv'], 'petId,status,quantity\n9007199254740993,sold,1\n'],
    [['list', '--json'], '[{"petId":9007199254740993,"quantity":1,"status":"sold"}]\n'],
    [['list', '--ndjson'], '{"petId":9007199254740993,"quantity":1,"status":"sold"}\n'],
    [['get', '9007199254740993'], '9007199254740993\tsold\t1\n'],
  ])('an item with an integer-like key holding another petId: %j', async (args, stdout) => {
    const result = await petinv('integer-keys', ['--no-cache', ...args]);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe(stdout);
    expect(result.code).toBe(0);
  });

  it('the petId it holds inside is not a pet of the list', async () => {
    const result = await petinv('integer-keys', ['--no-cache', 'get', '9007199254740992']);
    expect(result.code).toBe(5);
  });
});

describe('a list that names one pet twice is a contract error (exit 8) naming both positions', () => {
  it.each([
    [['summary']],
    [['get', '5']],
    [['adjust', '5', '1']],
    [['--json', 'summary']],
    [['set', '5', '1', '--dry-run']],
    [['set', '5', '1']],
  ])('%j', async (args) => {
    const before = patches.length;
    const result = await petinv('twice', args);
    expect(result.code).toBe(8);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('pet 5 is listed twice, as items 0 and 2 (counted from 0)');
    expect(patches.length).toBe(before);
  });

  it.each([[['list']], [['summary']], [['get', '1']]])(
    'a list answered 206 Partial Content is not the whole stock: %j',
    async (args) => {
      const result = await petinv('partial', args);
      expect(result.code).toBe(8);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain(
        "does not match the contract: it answered 206, where the contract's list is a 200 with every item",
      );
    },
  );

  it('a pet listed once in that list is still read', async () => {
    const result = await petinv('twice', ['get', '6']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('6\tavailable\t4\n');
  });
});

describe('a connection that breaks after the request was sent: outcome unknown (exit 8)', () => {
  it.each(Object.keys(BREAKS))('%s', async (name) => {
    const result = await petinv(`break-${name}`, [
      '--retries',
      '1',
      '--max-retry-wait',
      '1',
      'set',
      '42',
      '7',
    ]);
    expect(result.code).toBe(8);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(
      /^petinv: outcome unknown: PATCH \/inventory\/42 was sent to staging and the connection broke before an answer came \(.+\)( after 2 attempts)?; the update may have been applied; setting the same quantity again cannot apply it twice: petinv set 42 7 --env staging\n$/,
    );
    expect(result.stderr).not.toContain('cannot reach');
    const json = await petinv(`break-${name}`, ['--json', '--retries', '0', 'set', '42', '7']);
    expect(JSON.parse(json.stderr).error).toMatchObject({ code: 'outcome_unknown', exitCode: 8 });
  });

  it('an answer Node’s parser refuses stays refused whatever NODE_OPTIONS loosens, and says why', async () => {
    // --insecure-http-parser, set for some other program, would let Node read Content-Length with chunks.
    const result = await runPetinv(['--retries', '0', 'set', '42', '7'], {
      env: {
        PETINV_CONFIG_DIR: temporaryDirectory(),
        PETINV_ENV: 'staging',
        PETINV_BASE_URL: `${origin()}/break-length-and-chunked/v1`,
        PETINV_API_KEY: 'truth-test-key',
        NODE_OPTIONS: '--insecure-http-parser',
      },
    });
    expect(result.code).toBe(8);
    expect(result.stderr).toContain('(not an HTTP/1.1 answer: ');
  });

  it('bytes after a whole answer belong to no request: the answer stands', async () => {
    expect(await petinv('trailing', ['--retries', '0', 'set', '42', '7'])).toMatchObject({
      code: 0,
      stderr: '',
    });
  });

  it('reached by an address, not an environment: the advice names the address, and runs as written', async () => {
    const env = {
      PETINV_CONFIG_DIR: temporaryDirectory(),
      PETINV_BASE_URL: `${origin()}/break-reset/v1`,
      PETINV_API_KEY: 'truth-test-key',
    };
    const result = await runMain(['--retries', '0', 'set', '42', '7'], { env });
    expect(result.code).toBe(8);
    const advice = /twice: petinv (.*)\n$/.exec(result.stderr)?.[1] ?? '';
    // host:port is no environment's name: `--env 127.0.0.1:PORT` was refused as a usage error (exit 2).
    expect(advice).toBe(`set 42 7 --base-url ${origin()}/break-reset/v1`);
    const again = await runMain(['--retries', '0', ...advice.split(' ')], {
      env: { PETINV_CONFIG_DIR: env.PETINV_CONFIG_DIR, PETINV_API_KEY: env.PETINV_API_KEY },
    });
    expect(again.stderr).toContain(`petinv set 42 7 --base-url ${origin()}/break-reset/v1`);
    expect(again.code).toBe(8);
  });

  it('a write answered 200 whose body then broke off may have been applied too (exit 8)', async () => {
    const result = await petinv('body-broke-off', ['--retries', '0', 'set', '42', '7']);
    expect(result.code).toBe(8);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(
      /^petinv: outcome unknown: PATCH \/inventory\/42 was sent to staging and its answer broke off before it was complete \(.+\); the update may have been applied; setting the same quantity again cannot apply it twice: petinv set 42 7 --env staging\n$/,
    );
    const json = await petinv('body-broke-off', ['--json', '--retries', '0', 'set', '42', '7']);
    expect(JSON.parse(json.stderr).error).toMatchObject({ code: 'outcome_unknown', exitCode: 8 });
  });

  it('a write answered 200 whose body stalls past the timeout may have been applied too (exit 8)', async () => {
    const result = await petinv('body-stalls', ['--timeout', '300', '--retries', '0', 'set', '42', '7']);
    expect(result.code).toBe(8);
    expect(result.stderr).toBe(
      'petinv: outcome unknown: PATCH /inventory/42 was sent to staging and its answer did not complete within 300 ms; the update may have been applied; setting the same quantity again cannot apply it twice: petinv set 42 7 --env staging\n',
    );
  });

  it('a write answered 200 with no item says it may have been applied (exit 8)', async () => {
    const result = await petinv('not-an-item', ['set', '42', '7']);
    expect(result.code).toBe(8);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(
      /^petinv: the answer from staging to PATCH \/inventory\/42 does not match the contract: .+; it answered 200, so the update may have been applied: read it back with petinv get 42 --env staging\n$/,
    );
    const json = await petinv('not-an-item', ['--json', 'set', '42', '7']);
    expect(JSON.parse(json.stderr).error).toMatchObject({
      code: 'invalid_response',
      status: 200,
      exitCode: 8,
    });
  });

  it('a write sent whole with no answer before the timeout is an unknown outcome too', async () => {
    const result = await petinv('silent', ['--timeout', '300', '--retries', '0', 'set', '42', '7']);
    expect(result.code).toBe(8);
    expect(result.stderr).toBe(
      'petinv: outcome unknown: PATCH /inventory/42 was sent to staging and no answer came within 300 ms; the update may have been applied; setting the same quantity again cannot apply it twice: petinv set 42 7 --env staging\n',
    );
  });

  it('a connection refused is still "cannot reach" (exit 7): nothing was sent', async () => {
    const port = await closedPort();
    const result = await runMain(['--retries', '0', 'set', '42', '7'], {
      env: {
        PETINV_CONFIG_DIR: temporaryDirectory(),
        PETINV_ENV: 'staging',
        PETINV_BASE_URL: `http://127.0.0.1:${port}/v1`,
        PETINV_API_KEY: 'truth-test-key',
      },
    });
    expect(result.code).toBe(7);
    expect(result.stderr).toContain('cannot reach');
  });

  it('a retry of the same quantity that succeeds says the first may have been applied (text and --json)', async () => {
    counts.delete('reset-once');
    const result = await petinv('reset-once', ['set', '42', '7']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('42\tsold\t7\n');
    expect(result.stderr).toMatch(
      /^petinv: warning: pet 42 in staging: an earlier attempt of PATCH \/inventory\/42 was sent and got no answer \(ECONNRESET\), so it may have been applied; a retry with the same quantity then succeeded, and a quantity is absolute, so pet 42 holds 7 once, not twice\n$/,
    );
    counts.delete('reset-once');
    const json = await petinv('reset-once', ['--json', 'set', '42', '7']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ petId: 42, quantity: 7, status: 'sold' });
    expect(JSON.parse(json.stderr).warning.message).toContain(
      'may have been applied; a retry with the same quantity then succeeded',
    );
  });

  it('set against a service that breaks every connection, its list read too: outcome unknown, never "cannot reach"', async () => {
    const result = await petinv('reset-all', ['--retries', '0', 'set', '42', '7']);
    expect(result.code).toBe(8);
    expect(result.stderr).toContain(
      'outcome unknown: PATCH /inventory/42 was sent to staging and the connection broke before an answer came (ECONNRESET); the update may have been applied',
    );
    expect(result.stderr).not.toContain('cannot reach');
  });

  it('a read whose connection breaks after it was sent reached the service: not "cannot reach" (still exit 7)', async () => {
    for (const args of [['get', '42'], ['adjust', '42', '1'], ['summary']]) {
      const result = await petinv('reset-all', ['--retries', '0', ...args]);
      expect(result.code).toBe(7);
      expect(result.stderr).toMatch(
        /^petinv: the connection to staging broke after GET \/inventory was sent, before an answer came \(ECONNRESET\); the service was reached: try again, and if it goes on, check the service, or a proxy on the way\n$/,
      );
    }
  });

  it('set against a service that cannot be reached tries no write after its list read failed', async () => {
    const port = await closedPort();
    const result = await runMain(['--retries', '0', 'set', '42', '7'], {
      env: {
        PETINV_CONFIG_DIR: temporaryDirectory(),
        PETINV_BASE_URL: `http://127.0.0.1:${port}/v1`,
        PETINV_API_KEY: 'k',
      },
    });
    expect(result.code).toBe(7);
    expect(result.stderr).toContain(`cannot reach http://127.0.0.1:${port}/v1/inventory in`);
    expect(result.stderr).not.toContain('/inventory/42');
  });

  it('set whose list read (for the quantity before) breaks: the write is made, and says undo will not know it', async () => {
    const result = await petinv('list-reset', ['--retries', '0', 'set', '42', '7']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('42\tsold\t7\n');
    expect(result.stderr).toBe(
      "petinv: warning: pet 42's quantity before this write could not be read (network); this run is not recorded, so petinv undo will not know it\n",
    );
  });

  it('a bulk run whose updates all lose their answers stops, without "could not be reached"', async () => {
    const input = Array.from({ length: 20 }, (_, index) => `${index + 1} 5`).join('\n');
    const result = await petinv(
      'break-closed',
      ['--retries', '0', 'set', '-', '--concurrency', '1', '--pipelining', '1'],
      input,
    );
    expect(result.code).toBe(8);
    expect(result.stderr).toContain(
      'stopped early, the connection broke or no answer came 3 times in a row: updated 0 of 20 pets in staging',
    );
    expect(result.stderr).toContain('3 failed (3 with outcome unknown, maybe applied)');
    expect(result.stderr).toMatch(/, 17 not sent\n/);
    expect(result.stderr).not.toContain('could not be reached');
    // The three sent and never answered may have been applied: named apart, never as "not applied".
    expect(result.stderr).toContain(
      'petinv: not applied: line 4 (pet 4), line 5 (pet 5), line 6 (pet 6), line 7 (pet 7), line 8 (pet 8), line 9 (pet 9), line 10 (pet 10), line 11 (pet 11), line 12 (pet 12), line 13 (pet 13), line 14 (pet 14), line 15 (pet 15), line 16 (pet 16), line 17 (pet 17), line 18 (pet 18), line 19 (pet 19), line 20 (pet 20); apply the same input again to send them (rows already right are skipped)\n',
    );
    expect(result.stderr).toContain(
      'petinv: outcome unknown, maybe applied: line 1 (pet 1), line 2 (pet 2), line 3 (pet 3); apply the same input again: a second send cannot apply one twice, and a row with an expected (from) is checked again; one without is written over any change made since, so read it back first (petinv get ID)\n',
    );
    // The run ends with its own failure, not the third pet's.
    expect(result.stderr).toContain(
      'petinv: stopped early in staging, the connection broke or no answer came 3 times in a row: 17 updates not applied and 3 updates of unknown outcome (maybe applied); apply the same input again to send them (rows already right are skipped). The last failure: outcome unknown: PATCH /inventory/3 was sent',
    );
    const json = await petinv(
      'break-closed',
      ['--json', '--retries', '0', 'set', '-', '--concurrency', '1', '--pipelining', '1'],
      input,
    );
    const { summary } = JSON.parse(json.stderr);
    expect(summary.maybeApplied).toEqual([1, 2, 3].map((n) => ({ input: n, petId: n })));
    // Three rows, all sent before the streak stopped it: the history does not call it interrupted (QA).
    const env = {
      PETINV_CONFIG_DIR: temporaryDirectory(),
      XDG_STATE_HOME: temporaryDirectory(),
      PETINV_ENV: 'staging',
      PETINV_BASE_URL: `${origin()}/break-closed/v1`,
      PETINV_API_KEY: 'truth-test-key',
    };
    const sentAll = ['--retries', '0', 'set', '-', '--concurrency', '1', '--pipelining', '1'];
    expect((await runMain(sentAll, { env, input: '1 5\n2 5\n3 5\n' })).code).toBe(8);
    const [run] = JSON.parse((await runMain(['history', '--json'], { env })).stdout);
    expect(run.marks).toEqual(['failed']);
    expect(summary.notApplied).toEqual(
      Array.from({ length: 17 }, (_, index) => ({ input: index + 4, petId: index + 4 })),
    );
  });

  it('a bulk run counts the updates whose outcome is unknown', async () => {
    const result = await petinv('break-reset', ['--json', '--retries', '0', 'set', '-'], '1 5\n');
    // Maybe written, not refused: the broken-response status, as for one pet.
    expect(result.code).toBe(8);
    const failure = JSON.parse(result.stderr);
    expect(failure.error).toMatchObject({ code: 'outcome_unknown', exitCode: 8 });
    expect(failure.summary).toMatchObject({ failed: 1, unknown: 1 });
    expect(JSON.parse(result.stdout)).toEqual([
      expect.objectContaining({ input: 1, ok: false, maybeApplied: true, petId: 1, quantity: 5 }),
    ]);
    const text = await petinv('break-reset', ['--retries', '0', 'set', '-'], '1 5\n');
    expect(text.stderr).toContain('outcome unknown: PATCH /inventory/1 was sent to staging');
    expect(text.stderr).toContain('1 failed (1 with outcome unknown, maybe applied)');
    expect(text.stderr).toMatch(
      /petinv: outcome unknown: 1 update in staging was sent whole but no answer came; it may have been applied/,
    );
    expect(text.code).toBe(8);
  });

  it('a 202 Accepted is not "updated": the contract\'s success is 200, and accepted need not mean done', async () => {
    const one = await petinv('accepted', ['set', '42', '7']);
    expect(one.code).toBe(8);
    expect(one.stdout).toBe('');
    expect(one.stderr).toBe(
      'petinv: the answer from staging to PATCH /inventory/42 does not match the contract: a success other than 200, whose item is the update done; it answered 202, so the update may have been applied: read it back with petinv get 42 --env staging\n',
    );
    const bulk = await petinv('accepted', ['--json', 'set', '-'], '1 5\n');
    expect(bulk.code).toBe(8);
    expect(JSON.parse(bulk.stderr).summary).toMatchObject({ updated: 0, failed: 1, unknown: 1 });
  });

  it('a success too large to read: set says the update may have been applied, a bulk run counts it unknown', async () => {
    const one = await petinv('too-large', ['--max-body-size', '2K', 'set', '42', '7']);
    expect(one.code).toBe(8);
    expect(one.stderr).toContain('is larger than 2 KiB');
    expect(one.stderr).toContain(
      'it answered 200, so the update may have been applied; setting the same quantity again cannot apply it twice: petinv set 42 7',
    );
    const json = await petinv('too-large', ['--json', '--max-body-size', '2K', 'set', '42', '7']);
    expect(JSON.parse(json.stderr).error).toMatchObject({ code: 'body_too_large', status: 200, exitCode: 8 });
    const bulk = await petinv('too-large', ['--json', '--max-body-size', '2K', 'set', '-'], '1 5\n');
    expect(bulk.code).toBe(8);
    const failure = JSON.parse(bulk.stderr);
    expect(failure.error).toMatchObject({ code: 'outcome_unknown', exitCode: 8 });
    expect(failure.summary).toMatchObject({ failed: 1, unknown: 1 });
  });

  it('a bulk run counts as unknown an update answered with a success that is not the item sent', async () => {
    // The service took it (200), so it may hold it: not a refusal (exit 9), but maybe written (exit 8).
    const result = await petinv('not-an-item', ['--json', 'set', '-'], '1 5\n');
    expect(result.code).toBe(8);
    const failure = JSON.parse(result.stderr);
    expect(failure.error).toMatchObject({ code: 'outcome_unknown', exitCode: 8 });
    expect(failure.summary).toMatchObject({ failed: 1, unknown: 1 });
    // Each such result says so: in JSON, and in the RESULT column of the rows.
    const results = JSON.parse(result.stdout);
    expect(results).toEqual([expect.objectContaining({ input: 1, ok: false, maybeApplied: true, petId: 1 })]);
    const rows = await petinv('not-an-item', ['set', '-', '-o', 'csv', '--fields', 'input,result'], '1 5\n');
    expect(rows.stdout).toBe('input,result\n1,maybe applied\n');
    const text = await petinv('not-an-item', ['set', '-'], '1 5\n');
    expect(text.stderr).toContain('may have been applied: read it back with petinv get 1');
    expect(text.stderr).toContain('1 failed (1 with outcome unknown, maybe applied)');
    expect(text.stderr).toMatch(
      /petinv: outcome unknown: 1 update in staging was sent whole but answered with a success that could not be taken for the item sent; it may have been applied/,
    );
    expect(text.code).toBe(8);
  });
});

describe('text that leaves petinv', () => {
  it('CSV and TSV never hold a cell a spreadsheet runs as a formula; numbers stay numbers', async () => {
    const input = FORMULAS.map((_, index) => `${index + 1} ${index === 0 ? 0 : -index}`).join('\n');
    const csv = await petinv(
      'formula',
      ['set', '-', '-o', 'csv', '--concurrency', '1', '--pipelining', '1'],
      input,
    );
    expect(csv.code).toBe(9);
    const rows = csv.stdout.trim().split('\n');
    expect(rows[0]).toBe('input,result,petId,quantity,status,error,message');
    expect(rows.slice(1)).toEqual([
      `1,failed,1,0,,"'=HYPERLINK(""http://evil"",""x"")","'=HYPERLINK(""http://evil"",""x"")"`,
      "2,failed,2,-1,,'+cmd,'+cmd",
      "3,failed,3,-2,,'-2+3,'-2+3",
      "4,failed,4,-3,,'@SUM(1),'@SUM(1)",
      // The service's tab and carriage return: defused, and (as printable text) a space, trimmed.
      '5,failed,5,-4,,lead,lead',
      '6,failed,6,-5,,lead,lead',
    ]);
    const tsv = await petinv(
      'formula',
      ['set', '-', '-o', 'tsv', '--concurrency', '1', '--pipelining', '1'],
      input,
    );
    expect(tsv.stdout.trim().split('\n').slice(0, 4)).toEqual([
      '1\tfailed\t1\t0\t\t\'=HYPERLINK("http://evil","x")\t\'=HYPERLINK("http://evil","x")',
      "2\tfailed\t2\t-1\t\t'+cmd\t'+cmd",
      "3\tfailed\t3\t-2\t\t'-2+3\t'-2+3",
      "4\tfailed\t4\t-3\t\t'@SUM(1)\t'@SUM(1)",
    ]);
  });

  it('a service message loses its invisible and direction-changing characters, and the key split by them is hidden', async () => {
    const forbidden = /[\u00ad\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/;
    const text = await petinv('invisible', ['-v', 'set', '1', '2']);
    expect(text.code).toBe(6);
    expect(text.stderr).not.toMatch(forbidden);
    expect(text.stderr).not.toContain('truth-test-key');
    expect(text.stderr).toContain('key [redacted] refused evil petinv: ok softhyphen bom');
    // The -v trace shows the answer's header and body: the key is hidden there too.
    expect(text.stderr).toMatch(/x-key: \[redacted\]/i);
    // And in its status line, which node:http reads as Latin-1.
    const status = await petinv('invisible-status', ['-v', 'set', '1', '2']);
    expect(status.stderr).toMatch(/^< 400 \[redacted\] \(headers after/m);
    expect(status.stderr).not.toContain('truth-test-key');
    const json = await petinv('invisible', ['--json', 'set', '1', '2']);
    expect(json.stderr).not.toMatch(forbidden);
    expect(json.stderr).not.toMatch(/\\u200b|\\u202e|\\ufeff/i);
    expect(JSON.parse(json.stderr).error).toMatchObject({ code: 'badcode', status: 400 });
    expect(JSON.parse(json.stderr).error.message).toContain('key [redacted] refused');
  });
});
