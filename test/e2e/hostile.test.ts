import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPetinv, temporaryDirectory } from '../helpers/serve';

/**
 * One hostile inventory service on port 0; the first path segment picks how it misbehaves, so each
 * test's base URL is http://127.0.0.1:PORT/<scenario>/v1.
 */
let hostile: Server;
let origin: string;
const requests: string[] = [];

const scenarios: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
  endless(_req, res) {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.write('[');
    const chunk = Buffer.from('{"petId":1,"quantity":1,"status":"sold"},'.repeat(1000));
    const pump = () => {
      while (!res.destroyed && res.write(chunk)) {}
      if (!res.destroyed) res.once('drain', pump);
    };
    pump();
  },
  unauthorized(_req, res) {
    res.writeHead(401, { 'Content-Type': 'application/json', 'WWW-Authenticate': 'Bearer' });
    res.end('{"code":"unauthorized","message":"the API key is not valid","status":401}');
  },
  'retry-after'(_req, res) {
    res.writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': '3600' });
    res.end('{"code":"unavailable","message":"down for maintenance","status":503}');
  },
};

beforeAll(async () => {
  hostile = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const scenario = String(req.url).split('/')[1] ?? '';
    scenarios[scenario]?.(req, res);
  });
  await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(hostile.address() as { port: number }).port}`;
});
afterAll(() => {
  hostile.closeAllConnections();
  return new Promise((resolve) => hostile.close(resolve));
});

const petinv = (scenario: string, args: string[], extra: { env?: NodeJS.ProcessEnv; input?: string } = {}) =>
  runPetinv(args, {
    env: {
      PETINV_CONFIG_DIR: temporaryDirectory(),
      PETINV_ENV: 'local',
      PETINV_BASE_URL: `${origin}/${scenario}/v1`,
      PETINV_API_KEY: 'k',
      ...extra.env,
    },
    input: extra.input,
  });

const countRequests = (prefix: string) => requests.filter((request) => request.startsWith(prefix)).length;

describe('bounded memory and time against any server', () => {
  it('an endless body is cut off at --max-body-size with one error naming the limit (exit 8)', async () => {
    const result = await petinv('endless', ['list', '--max-body-size', '2M']);
    expect(result).toEqual({
      code: 8,
      stdout: '',
      stderr:
        'petinv: the answer from local to GET /inventory is larger than 2 MiB, the limit petinv reads; raise it with --max-body-size or PETINV_MAX_BODY_SIZE\n',
    });
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

describe('a bulk run stops early when every request would fail', () => {
  const lines = (count: number) => Array.from({ length: count }, (_, index) => `${index + 1} 5\n`).join('');

  it('401: ends at once with exit 4 and a summary; nothing more is sent', async () => {
    const before = countRequests('PATCH /unauthorized/');
    const result = await petinv('unauthorized', ['set', '-', '--concurrency', '1'], { input: lines(50) });
    expect(result.code).toBe(4);
    expect(countRequests('PATCH /unauthorized/') - before).toBe(1);
    expect(result.stderr).toMatch(
      /petinv: stopped early, the service refused the API key: updated 0 of 50 pets in local in [\d.]+s; 1 failed, 49 not sent, 0 lines skipped\n/,
    );
    expect(result.stderr).toMatch(
      /petinv: the service refused the API key for local \(401 unauthorized: the API key is not valid\); run: petinv login --env local\n$/,
    );
  });

  it('401 with updates in flight: only those already sent, at most --concurrency', async () => {
    const before = countRequests('PATCH /unauthorized/');
    const result = await petinv('unauthorized', ['--json', 'set', '-'], { input: lines(500) });
    expect(result.code).toBe(4);
    const sent = countRequests('PATCH /unauthorized/') - before;
    expect(sent).toBeLessThanOrEqual(8);
    const summary = JSON.parse(result.stderr.split('\n')[0] as string).summary;
    expect(summary).toEqual({
      updated: 0,
      failed: sent,
      skipped: 0,
      notSent: 500 - sent,
      stopped: 'refused',
    });
  });

  it('a service that goes away mid-run: stops after 3 network failures in a row (exit 7)', async () => {
    let answered = 0;
    const dying = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'Content-Type': 'application/json' });
      const petId = String(req.url).split('/').pop();
      res.end(`{"petId":${petId},"quantity":5,"status":"sold"}`);
      // After five answers the service disappears: its connections are cut, new ones refused.
      if (++answered === 5)
        res.on('finish', () => {
          dying.close();
          dying.closeAllConnections();
        });
    });
    await new Promise<void>((resolve) => dying.listen(0, '127.0.0.1', resolve));
    const port = (dying.address() as { port: number }).port;
    const result = await runPetinv(['--retries', '0', 'set', '-', '--concurrency', '1'], {
      env: {
        PETINV_CONFIG_DIR: temporaryDirectory(),
        PETINV_ENV: 'local',
        PETINV_BASE_URL: `http://127.0.0.1:${port}/v1`,
        PETINV_API_KEY: 'k',
      },
      input: lines(100),
    });
    dying.closeAllConnections();
    expect(result.code).toBe(7);
    expect(result.stderr).toMatch(
      /petinv: stopped early, the service could not be reached 3 times in a row: updated 5 of 100 pets in local in [\d.]+s; 3 failed, 92 not sent, 0 lines skipped\n/,
    );
    expect(result.stderr).toMatch(
      /petinv: cannot reach http:\/\/127\.0\.0\.1:\d+\/v1\/inventory\/\d+ in local/,
    );
  });
});
