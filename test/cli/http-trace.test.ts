import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, startInventoryServer } from '../../src/server/start';
import { useFakeServer } from '../helpers/lying-server';
import { runMain } from '../helpers/main';
import { closedPort, temporaryDirectory } from '../helpers/serve';

/** -v, -vv and PETINV_DEBUG=http: every exchange on stderr, and never the key. */

const KEY = 'trace-key-0123456789abcdef';
let server: RunningServer;
const directory = temporaryDirectory('petinv-trace-');

/** Echoes the key everywhere it can, split by an escape sequence too: first a 503, then the list. */
let requests = 0;
const hostile = useFakeServer((request, response) => {
  requests++;
  // An escape sequence inside the key: once made printable, the two halves would meet again.
  const split = `${KEY.slice(0, 5)}\u001b[0m${KEY.slice(5)}`;
  response.setHeader('X-Echo', `${request.headers.authorization} and ${KEY}`);
  response.setHeader('Location', `http://elsewhere.example/v1?key=${KEY}`);
  if (requests === 1) {
    response.writeHead(503, { 'Retry-After': '0', 'Content-Type': 'text/plain' });
    response.end(`busy; your key was ${split}`);
    return;
  }
  response.writeHead(200, { 'Content-Type': 'application/json' });
  response.end('[{"petId":1,"quantity":2,"status":"sold"}]');
});

beforeAll(async () => {
  server = await startInventoryServer({
    port: 0,
    dataFile: join(directory, 'inventory.json'),
    seed: 2,
    apiKeys: [KEY],
  });
});
afterAll(async () => {
  await server.close();
  rmSync(directory, { recursive: true, force: true });
});

const env = (baseUrl: string, extra: NodeJS.ProcessEnv = {}) => ({
  PETINV_CONFIG_DIR: directory,
  PETINV_BASE_URL: baseUrl,
  PETINV_API_KEY: KEY,
  ...extra,
});

describe('-v traces every exchange', () => {
  it('method, URL, request headers with the key redacted, status, response headers and timing', async () => {
    const result = await runMain(['-v', 'list'], { env: env(server.baseUrl) });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('1\tavailable\t12\n2\tpending\t24\n');
    const lines = result.stderr.split('\n');
    expect(lines).toContain(`> GET ${server.baseUrl}/inventory`);
    expect(lines).toContain('> Authorization: Bearer [redacted]');
    expect(lines).toContain('> Accept: application/json');
    expect(result.stderr).toMatch(/^< 200 OK \(headers after \d+\.\d ms\)$/m);
    expect(result.stderr).toMatch(/^< ETag: "/m);
    expect(result.stderr).toMatch(/^\* 200 complete after \d+\.\d ms$/m);
    expect(result.stderr).not.toContain('body');
    expect(result.stderr).not.toContain(KEY);
  });

  it('-vv adds the bodies; PETINV_DEBUG=http is -v and PETINV_DEBUG=http,body is -vv', async () => {
    const body = '< body (93 bytes): [{"petId":1,"quantity":12,"status":"available"}';
    const twice = await runMain(['list', '-vv', '--no-cache'], { env: env(server.baseUrl) });
    expect(twice.stderr).toContain(body);
    const patch = await runMain(['-vv', 'set', '2', '24'], { env: env(server.baseUrl) });
    expect(patch.stderr).toContain('> body (15 bytes): {"quantity":24}');

    const http = await runMain(['list'], { env: env(server.baseUrl, { PETINV_DEBUG: 'http' }) });
    expect(http.stderr).toContain(`> GET ${server.baseUrl}/inventory`);
    expect(http.stderr).not.toContain('body');
    const bodies = await runMain(['list', '--no-cache'], {
      env: env(server.baseUrl, { PETINV_DEBUG: 'http,body' }),
    });
    expect(bodies.stderr).toContain(body);

    const quiet = await runMain(['list'], { env: env(server.baseUrl) });
    expect(quiet.stderr).toBe('');
  });

  it('retries and their reasons, and a failure to connect', async () => {
    const closed = `http://127.0.0.1:${await closedPort()}/v1`;

    const result = await runMain(['-v', 'list', '--retries', '1', '--max-retry-wait', '0'], {
      env: env(closed),
    });
    expect(result.code).toBe(7);
    expect(result.stderr).toMatch(
      new RegExp(`^\\* GET ${closed}/inventory failed after \\d+\\.\\d ms \\(network: ECONNREFUSED\\)$`, 'm'),
    );
  });

  it('never shows the key, though the service echoes it in headers, bodies and URLs', async () => {
    const result = await runMain(['-vv', 'list', '--retries', '1'], { env: env(`${hostile.origin}/v1`) });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/^< 503 Service Unavailable/m);
    expect(result.stderr).toContain('* retrying GET /inventory in 0 ms (503, as its Retry-After asked)');
    expect(result.stderr).toContain('< X-Echo: Bearer [redacted] and [redacted]');
    expect(result.stderr).toContain('< Location: http://elsewhere.example/v1?key=[redacted]');
    expect(result.stderr).toContain('< body (49 bytes): busy; your key was [redacted]');
    expect(result.stderr).not.toContain(KEY);
  });
});
