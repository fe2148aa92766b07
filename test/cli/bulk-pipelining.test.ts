import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_PIPELINING } from '../../src/commands/options';
import { type FakeServer, startFakeServer, startRawServer } from '../helpers/lying-server';
import { runMain } from '../helpers/main';
import { temporaryDirectory } from '../helpers/serve';

/**
 * A bulk run's connections (--concurrency) and the updates each carries at once (--pipelining), seen
 * from a keep-alive node:http service that counts them. node:http fires a request event for each
 * pipelined request as it arrives, so the requests a connection has unanswered are what the client
 * pipelined on it.
 */

interface Seen {
  connections: number;
  /** The most PATCHes one connection had unanswered at once. */
  deepest: number;
  /** The same, counted only for the PATCHes after the 30th: sent well after the loss, when there is one. */
  deepestLate: number;
  patches: number;
  /** The most connections open at once. */
  mostOpen: number;
}

/** The service a test started, closed after it. */
let service: Pick<FakeServer, 'port' | 'close'> | undefined;
afterEach(() => service?.close());

/**
 * Starts the counting service. It answers each PATCH after `delayMs` with the quantity asked for, and
 * `onPatch` may cut a connection instead (returning true: no answer).
 */
async function startService(
  options: {
    delayMs?: number;
    onPatch?: (n: number, req: IncomingMessage, res: ServerResponse) => boolean;
  } = {},
) {
  const seen: Seen = { connections: 0, deepest: 0, deepestLate: 0, patches: 0, mostOpen: 0 };
  const unanswered = new Map<Socket, number>();
  const started = await startFakeServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      if (req.method === 'GET') {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end('[]');
        return;
      }
      const socket = req.socket;
      const depth = (unanswered.get(socket) ?? 0) + 1;
      unanswered.set(socket, depth);
      seen.deepest = Math.max(seen.deepest, depth);
      const n = ++seen.patches;
      if (n > 30) seen.deepestLate = Math.max(seen.deepestLate, depth);
      if (options.onPatch?.(n, req, res)) return;
      setTimeout(() => {
        unanswered.set(socket, (unanswered.get(socket) ?? 1) - 1);
        const petId = String(req.url).split('/').pop();
        const { quantity } = JSON.parse(body) as { quantity: number };
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ petId: Number(petId), quantity, status: 'sold' }));
      }, options.delayMs ?? 2);
    });
  });
  service = started;
  let open = 0;
  started.server.on('connection', (socket: Socket) => {
    seen.connections++;
    seen.mostOpen = Math.max(seen.mostOpen, ++open);
    socket.on('close', () => open--);
  });
  return { seen, server: started.server, env: serviceEnv(started.port) };
}

/** The environment that points petinv at a service on `port`. */
const serviceEnv = (port: number) => ({
  PETINV_CONFIG_DIR: temporaryDirectory(),
  PETINV_CACHE_DIR: temporaryDirectory(),
  PETINV_ENV: 'local',
  PETINV_BASE_URL: `http://127.0.0.1:${port}/v1`,
  PETINV_API_KEY: 'k',
});

/** What an honest service answers: the list (empty), or the pet a PATCH names with the quantity it asks for. */
const honestBody = (method: string | undefined, url: string | undefined, body: string) =>
  method === 'GET'
    ? '[]'
    : JSON.stringify({
        petId: Number(String(url).split('/').pop()),
        quantity: (JSON.parse(body) as { quantity: number }).quantity,
        status: 'sold',
      });

const okResponse = (version: string, body: string) =>
  `HTTP/${version} 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;

const sheet = (count: number) =>
  `petId,quantity\n${Array.from({ length: count }, (_, i) => `${i + 1},${i + 7}`).join('\n')}\n`;

describe('a bulk run against a service that keeps its connections', () => {
  it('opens --concurrency connections (the list read on one of them), each carrying up to --pipelining updates', async () => {
    const { seen, env } = await startService();
    const result = await runMain(['set', '-', '--concurrency', '2'], { env, input: sheet(80) });
    expect(result).toMatchObject({ code: 0, stderr: expect.stringContaining('80 changed') });
    expect(result.stderr).not.toContain('warning');
    expect(seen.patches).toBe(80);
    expect(seen.connections).toBeLessThanOrEqual(2);
    expect(seen.deepest).toBeGreaterThan(1);
    expect(seen.deepest).toBeLessThanOrEqual(DEFAULT_PIPELINING);
  });

  it('with --pipelining 1 sends one update at a time on each of --concurrency connections', async () => {
    const { seen, env } = await startService();
    const result = await runMain(['set', '-', '--concurrency', '2', '--pipelining', '1'], {
      env,
      input: sheet(40),
    });
    expect(result.code).toBe(0);
    expect(seen.patches).toBe(40);
    expect(seen.deepest).toBe(1);
    expect(seen.mostOpen).toBeLessThanOrEqual(2);
  });

  it('says so when a connection is cut under pipelined updates, retries them itself, and pipelines no more', async () => {
    // The fifth update's connection is cut before it is answered: it and those pipelined behind it were
    // sent and got no answer, so each may have been applied.
    const { seen, env } = await startService({
      delayMs: 5,
      onPatch: (n, req) => {
        if (n !== 5) return false;
        req.socket.destroy();
        return true;
      },
    });
    const result = await runMain(['set', '-', '--concurrency', '2'], { env, input: sheet(60) });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('60 changed');
    // Each lost update was sent again by petinv (not silently by undici) and it says what that means.
    expect(result.stderr).toMatch(/an earlier attempt of PATCH \/inventory\/\d+ was sent and got no answer/);
    // After the loss, one update at a time on each connection, and still --concurrency connections at once.
    expect(seen.deepestLate).toBe(1);
    expect(seen.mostOpen).toBeLessThanOrEqual(2);
  });
});

describe('a bulk run against a service that closes its connections', () => {
  it('never pipelines, and loses nothing', async () => {
    const { seen, env, server } = await startService();
    server.on('request', (_req, res: ServerResponse) => res.setHeader('Connection', 'close'));
    const result = await runMain(['set', '-', '--concurrency', '2'], { env, input: sheet(30) });
    expect(result.code).toBe(0);
    expect(result.stderr).not.toContain('warning');
    expect(seen.patches).toBe(30);
    expect(seen.deepest).toBe(1);
  });

  it('keeps no more updates in flight than connections, so none times out waiting for a connection', async () => {
    // One connection, each answer 200 ms, a 500 ms deadline: one update at a time meets it. With the
    // pipelining depth in flight and nothing pipelined, the third and fourth waited in undici's queue with
    // their clocks running, timed out unsent or sent late, and were sent twice (the service saw more than 6).
    const { seen, env, server } = await startService({ delayMs: 200 });
    server.on('request', (_req, res: ServerResponse) => res.setHeader('Connection', 'close'));
    const result = await runMain(['set', '-', '--concurrency', '1', '--timeout', '500', '--retries', '1'], {
      env,
      input: sheet(6),
    });
    expect(result.stderr).not.toContain('warning');
    expect(result).toMatchObject({ code: 0, stderr: expect.stringContaining('6 changed') });
    expect(seen.patches).toBe(6);
  });
});

describe('a bulk run against an HTTP/1.0 service', () => {
  it('never pipelines: an HTTP/1.0 answer without keep-alive closes its connection', async () => {
    // Each connection: one request read, answered as HTTP/1.0 with no Connection header, then closed.
    // Requests pipelined behind it are never read; sent again, each was said to be maybe applied.
    const received: string[] = [];
    service = await startRawServer(({ socket, method, path: url, body }) => {
      // One request per connection: what follows it is never read.
      if (socket.writableEnded) return;
      received.push(`${method} ${url}`);
      socket.end(okResponse('1.0', honestBody(method, url, body)));
    });
    const { port } = service as FakeServer;
    const result = await runMain(['set', '-', '--concurrency', '2'], {
      env: serviceEnv(port),
      input: sheet(20),
    });
    expect(result.stderr).not.toContain('warning');
    expect(result).toMatchObject({ code: 0, stderr: expect.stringContaining('20 changed') });
    expect(received.filter((line) => line.startsWith('PATCH'))).toHaveLength(20);
  });
});

describe('a bulk run against a service that answers pipelined requests out of order', () => {
  it('pipelines no more once an answer is for another pet: only the updates already pipelined fail', async () => {
    // Each connection's requests are answered last first once two have arrived (one alone, after 20 ms):
    // pipelined, every answer lands on the wrong request; one at a time, each is right.
    const queues = new Map<Socket, { queued: string[]; timer?: NodeJS.Timeout }>();
    service = await startRawServer(({ socket, method, path: url, body }) => {
      const queue = queues.get(socket) ?? { queued: [] };
      queues.set(socket, queue);
      const flush = () => {
        clearTimeout(queue.timer);
        for (const answer of queue.queued.splice(0).reverse()) socket.write(okResponse('1.1', answer));
      };
      queue.queued.push(honestBody(method, url, body));
      if (queue.queued.length >= 2) flush();
      else queue.timer = setTimeout(flush, 20);
    });
    const { port } = service as FakeServer;
    const result = await runMain(['set', '-', '--concurrency', '2', '--ndjson'], {
      env: serviceEnv(port),
      input: sheet(40),
    });
    const results = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { ok: boolean; error?: { message: string } });
    const failed = results.filter((item) => !item.ok);
    // Those failed said so, and that they may have been applied.
    for (const item of failed)
      expect(item.error?.message).toMatch(/it answered for pet \d+; .*may have been applied/);
    // At most what two connections had pipelined when the first wrong answer came.
    expect(failed.length).toBeGreaterThan(0);
    expect(failed.length).toBeLessThanOrEqual(2 * DEFAULT_PIPELINING);
  });
});
