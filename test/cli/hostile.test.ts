import { describe, expect, it } from 'vitest';
import {
  answer,
  byScenario,
  endless,
  type Handler,
  startFakeServer,
  trickle,
  useFakeServer,
} from '../helpers/lying-server';
import { runMain } from '../helpers/main';
import { temporaryDirectory } from '../helpers/serve';

/**
 * One hostile inventory service on port 0; the first path segment picks how it misbehaves, so each
 * test's base URL is http://127.0.0.1:PORT/<scenario>/v1.
 */
const requests: string[] = [];

const scenarios: Record<string, Handler> = {
  endless: endless('{"petId":1,"quantity":1,"status":"sold"},'),
  trickle,
  unauthorized: answer(401, '{"code":"unauthorized","message":"the API key is not valid","status":401}', {
    'WWW-Authenticate': 'Bearer',
  }),
  'control-json'(_req, res) {
    res.writeHead(400, { 'Content-Type': 'application/json' });
    res.end(
      JSON.stringify({
        code: 'bad\u001b[2J',
        message: `\u001b]0;pwned\u0007\u001b[2J\u001b[Hline one\r\npetinv: all is well\u001b[31m${'!'.repeat(5000)}`,
        status: 400,
      }),
    );
  },
  'control-text'(_req, res) {
    res.writeHead(404, { 'Content-Type': 'text/plain' });
    res.end(`\u001b[2J\u001b[Hgone\rpetinv: forged\u0007\n${'x'.repeat(100_000)}`);
  },
  'control-header'(_req, res) {
    // HTTP lets a header carry bytes 0x80-0xff; 0x9b is the 8-bit form of the escape that starts CSI.
    res.writeHead(200, { 'Content-Type': 'application/json', Deprecation: '@1\u009b2J\u009b31mred' });
    res.end('[]');
  },
  'control-body'(_req, res) {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end('\u001b]0;pwned\u0007\u001b[2J not json');
  },
  'retry-after': answer(503, '{"code":"unavailable","message":"down for maintenance","status":503}', {
    'Retry-After': '3600',
  }),
};
const hostile = useFakeServer(byScenario(scenarios, requests));

const petinv = (scenario: string, args: string[], extra: { env?: NodeJS.ProcessEnv; input?: string } = {}) =>
  runMain(args, {
    env: {
      PETINV_CONFIG_DIR: temporaryDirectory(),
      PETINV_ENV: 'local',
      PETINV_BASE_URL: `${hostile.origin}/${scenario}/v1`,
      PETINV_API_KEY: 'hostile-test-key',
      ...extra.env,
    },
    input: extra.input,
  });

const countRequests = (prefix: string) => requests.filter((request) => request.startsWith(prefix)).length;

describe('bounded memory and time against any server', () => {
  it('an endless body is cut off at --max-body-size with one error naming the limit (exit 8)', async () => {
    // The list is written as it arrives, so the items before the limit are out: the error says so.
    const result = await petinv('endless', ['list', '--max-body-size', '2M']);
    expect(result.code).toBe(8);
    expect(result.stdout).toMatch(/^(1\tsold\t1\n)+$/);
    const printed = result.stdout.split('\n').length - 1;
    expect(result.stderr).toBe(
      `petinv: the answer from local to GET /inventory is larger than 2 MiB, the limit petinv reads; raise it with --max-body-size or PETINV_MAX_BODY_SIZE; the output stops after ${printed} pets and is incomplete\n`,
    );
  });

  it('a body that trickles forever ends at --timeout, which covers reading the body', async () => {
    const result = await petinv('trickle', ['--timeout', '300', '--retries', '0', 'list']);
    expect(result.code).toBe(8);
    expect(result.stderr).toMatch(
      /^petinv: no answer from http:\/\/127\.0\.0\.1:\d+\/trickle\/v1\/inventory within 300 ms in local; raise --timeout or try again later\n$/,
    );
  });

  it('PETINV_MAX_BODY_SIZE sets the limit too; the flag wins over it', async () => {
    const fromVariable = await petinv('endless', ['list'], { env: { PETINV_MAX_BODY_SIZE: '64K' } });
    expect(fromVariable.code).toBe(8);
    expect(fromVariable.stderr).toContain('larger than 64 KiB');
    const flagWins = await petinv('endless', ['list', '--max-body-size', '128k'], {
      env: { PETINV_MAX_BODY_SIZE: '64K' },
    });
    expect(flagWins.stderr).toContain('larger than 128 KiB');
  });

  it.each([
    [['--max-body-size', 'lots'], {}, 2, '--max-body-size lots: must be a size from 1 byte to'],
    [['--max-body-size', '1G'], {}, 2, '--max-body-size 1G: must be a size'],
    [[], { PETINV_MAX_BODY_SIZE: '-1' }, 3, 'PETINV_MAX_BODY_SIZE -1: must be a size'],
    [['--max-retry-wait', '1.5'], {}, 2, '--max-retry-wait 1.5: must be a whole number of seconds'],
    [[], { PETINV_MAX_RETRY_WAIT: 'forever' }, 3, 'PETINV_MAX_RETRY_WAIT forever: must be a whole number'],
  ])('refuses the limit %j %j before sending anything', async (args, env, code, message) => {
    const before = requests.length;
    const result = await petinv('endless', [...args, 'list'], { env });
    expect(result.code).toBe(code);
    expect(result.stderr).toContain(`petinv: ${message}`);
    expect(requests.length).toBe(before);
  });

  it('a Retry-After past the waiting budget gives up at once with the reason', async () => {
    const before = countRequests('GET /retry-after/');
    const result = await petinv('retry-after', ['list']);
    expect(result.code).toBe(8);
    expect(result.stderr).toBe(
      'petinv: the service failed GET /inventory in local (503 unavailable: down for maintenance); it asked for 3600s more before a retry, past the 60s petinv waits in all (--max-retry-wait, PETINV_MAX_RETRY_WAIT); raise it, or try again later\n',
    );
    expect(countRequests('GET /retry-after/') - before).toBe(1);
  });
});

/** The C0 and C1 control characters in a text, the line feed aside. */
const controlCharacters = (text: string) =>
  [...text].filter((character) => {
    const code = character.codePointAt(0) as number;
    return (code < 0x20 && character !== '\n') || (code >= 0x7f && code <= 0x9f);
  });

describe('what reaches the terminal', () => {
  /** One line, nothing a terminal would act on, no line of its own that starts like petinv's. */
  const expectPrintable = (stderr: string) => {
    expect(controlCharacters(stderr)).toEqual([]);
    expect(stderr.split('\n')).toHaveLength(2);
    expect(stderr.endsWith('\n')).toBe(true);
  };

  it('an error message full of escape sequences: stripped, one line, truncated', async () => {
    const result = await petinv('control-json', ['list']);
    expect(result.code).toBe(6);
    expectPrintable(result.stderr);
    expect(result.stderr).toMatch(
      /^petinv: the service rejected GET \/inventory in local \(400 bad: line one petinv: all is well!+…\)\n$/,
    );
    expect(result.stderr.length).toBeLessThan(400);
  });

  it('the same with --json: the error body is one bounded line too', async () => {
    const result = await petinv('control-json', ['--json', 'list']);
    expectPrintable(result.stderr);
    const { error } = JSON.parse(result.stderr);
    expect(error.code).toBe('bad');
    expect(error.message).toMatch(/^line one petinv: all is well!+…$/);
  });

  it('a non-JSON error body', async () => {
    const result = await petinv('control-text', ['list']);
    expect(result.code).toBe(5);
    expectPrintable(result.stderr);
    expect(result.stderr).toContain('(404: gone petinv: forged� xxx');
    expect(result.stderr.length).toBeLessThan(400);
  });

  it('a header value (Deprecation) with 8-bit escape sequences', async () => {
    const result = await petinv('control-header', ['list']);
    expect(result.code).toBe(0);
    expectPrintable(result.stderr);
    expect(result.stderr).toBe(
      'petinv: warning: GET /inventory is deprecated by the service in local (Deprecation: @1red); it may stop working\n',
    );
  });

  it('the same with --json: the warning is a JSON line, as everything on stderr is', async () => {
    const result = await petinv('control-header', ['--json', 'list']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stderr)).toEqual({
      warning: {
        message:
          'GET /inventory is deprecated by the service in local (Deprecation: @1red); it may stop working',
      },
    });
  });

  it('a body that breaks the contract, quoted by the JSON parser', async () => {
    const result = await petinv('control-body', ['list']);
    expect(result.code).toBe(8);
    expectPrintable(result.stderr);
    expect(result.stderr).toMatch(
      /^petinv: the answer from local to GET \/inventory does not match the contract: not JSON/,
    );
  });

  it('a bulk line echoed in an error', async () => {
    const result = await petinv('endless', ['set', '-', '--strict'], {
      input: '1 1\n\u001b[2J\u001b]0;pwned\u0007x\u009b31m 5\n',
    });
    expect(result.code).toBe(2);
    expect(controlCharacters(result.stderr)).toEqual([]);
    expect(result.stderr).toBe(
      'petinv: line 2: petId "�[2J�]0;pwned�x�31m" is not a whole number\npetinv: --strict: 1 bad line; nothing was sent (run petinv help set)\n',
    );
  });
});

describe('a bulk run stops early when every request would fail', () => {
  const lines = (count: number) => Array.from({ length: count }, (_, index) => `${index + 1} 5\n`).join('');
  /** A run of 100 updates against the service at `port`, one at a time, never retried. */
  const runAgainst = (port: number, flags: readonly string[] = []) =>
    runMain([...flags, '--retries', '0', 'set', '-', '--concurrency', '1', '--pipelining', '1'], {
      env: {
        PETINV_CONFIG_DIR: temporaryDirectory(),
        PETINV_ENV: 'local',
        PETINV_BASE_URL: `http://127.0.0.1:${port}/v1`,
        PETINV_API_KEY: 'k',
      },
      input: lines(100),
    });

  it('401: the one read of the inventory a run starts with is refused: exit 4, no update sent', async () => {
    const before = countRequests('PATCH /unauthorized/');
    const result = await petinv('unauthorized', ['set', '-', '--concurrency', '1'], { input: lines(50) });
    expect(result.code).toBe(4);
    expect(countRequests('PATCH /unauthorized/') - before).toBe(0);
    expect(result.stderr).toMatch(
      /^petinv: the service refused the API key for local \(401 unauthorized: the API key is not valid\); the key came from PETINV_API_KEY, .*\n$/,
    );
    const json = await petinv('unauthorized', ['--json', 'set', '-'], { input: lines(500) });
    expect(json.code).toBe(4);
    expect(JSON.parse(json.stderr).error.code).toBe('unauthorized');
    expect(countRequests('PATCH /unauthorized/') - before).toBe(0);
  });

  it('a service that goes away mid-run: stops after 3 network failures in a row (exit 7, or 8 when one may have been applied)', async () => {
    let answered = 0;
    const dying = await startFakeServer((req, res) => {
      // The run's one read of the inventory: empty, so every line is sent.
      if (req.method === 'GET') return answer(200, '[]')(req, res);
      const petId = String(req.url).split('/').pop();
      answer(200, `{"petId":${petId},"quantity":5,"status":"sold"}`)(req, res);
      // After five answers the service disappears: its connections are cut, new ones refused.
      if (++answered === 5) res.on('finish', () => void dying.close());
    });
    // One update at a time: with more on the connection, those sent when it is cut are of unknown outcome.
    const result = await runAgainst(dying.port);
    await dying.close();
    // The sixth update may be sent on the one connection just before the service cuts it: its outcome is
    // then unknown, the summary says so, and the run ends with the broken-response status (8), else 7.
    expect(result.stderr).toMatch(
      /petinv: stopped early, the service could not be reached 3 times in a row: updated 5 of 100 pets in local in [\d.]+s; \d+ changed, 0 already right, 3 failed(?: \(1 with outcome unknown, maybe applied\))?, 0 conflicts, 0 lines skipped, 92 not sent\n/,
    );
    const unknown = result.stderr.includes('(1 with outcome unknown, maybe applied)');
    expect(result.code).toBe(unknown ? 8 : 7);
    // The run's failure is the run's: what is left and what to do, then the last pet's failure.
    expect(result.stderr).toMatch(
      unknown
        ? /petinv: stopped early in local, the service could not be reached 3 times in a row: 94 updates not applied and 1 update of unknown outcome \(maybe applied\); apply the same input again to send them \(rows already right are skipped\)\. The last failure: cannot reach http:\/\/127\.0\.0\.1:\d+\/v1\/inventory\/\d+ in local/
        : /petinv: stopped early in local, the service could not be reached 3 times in a row: 95 updates not applied; apply the same input again to send them \(rows already right are skipped\)\. The last failure: cannot reach http:\/\/127\.0\.0\.1:\d+\/v1\/inventory\/\d+ in local/,
    );
  });

  it('a service that answers every update with a server error: stops after 10 in a row (exit 8), naming the rest', async () => {
    let patches = 0;
    const failing = await startFakeServer((req, res) => {
      if (req.method === 'GET') return answer(200, '[]')(req, res);
      patches++;
      answer(503, '{"code":"unavailable","message":"down for maintenance","status":503}')(req, res);
    });
    const result = await runAgainst(failing.port, ['--json']);
    await failing.close();
    expect(result.code).toBe(8);
    expect(patches).toBe(10);
    const { error, summary } = JSON.parse(result.stderr.trim().split('\n').at(-1) as string);
    expect(error.message).toContain('down for maintenance');
    expect(summary).toMatchObject({ updated: 0, failed: 10, notSent: 90, stopped: 'failing' });
    expect(summary.notApplied).toHaveLength(100);
  });

  it.each([
    [429, 'rate_limited'],
    [408, 'request_timeout'],
  ])(
    'a service that answers every update %i (overloaded, as with a 503): stops after 10 in a row too',
    async (status, code) => {
      let patches = 0;
      const refusing = await startFakeServer((req, res) => {
        if (req.method === 'GET') return answer(200, '[]')(req, res);
        patches++;
        answer(status, { code, message: 'slow down', status }, { 'Retry-After': '0' })(req, res);
      });
      const result = await runAgainst(refusing.port, ['--json']);
      await refusing.close();
      expect(patches).toBe(10);
      const { summary } = JSON.parse(result.stderr.trim().split('\n').at(-1) as string);
      expect(summary).toMatchObject({ updated: 0, failed: 10, notSent: 90, stopped: 'failing' });
    },
  );
});
