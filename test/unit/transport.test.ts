import { Agent, MockAgent, ProxyAgent } from 'undici';
import { describe, expect, it, vi } from 'vitest';
import { httpTransport } from '../../src/client/http-transport';
import type { Transport } from '../../src/client/transport';
import { TransportError } from '../../src/client/transport';
import { undiciTransport } from '../../src/client/undici-transport';
import {
  answer,
  byScenario,
  endless,
  inTurn,
  trickle,
  useFakeServer,
  useRawServer,
} from '../helpers/lying-server';
import { closedPort } from '../helpers/serve';

describe('undiciTransport with MockAgent', () => {
  const mockAgent = new MockAgent();
  mockAgent.disableNetConnect();
  const pool = mockAgent.get('https://inventory.test');
  const transport = undiciTransport(mockAgent);

  it('sends method, headers and body, and reads status, headers and text', async () => {
    pool
      .intercept({
        path: '/v1/inventory/1',
        method: 'PATCH',
        body: '{"quantity":2}',
        headers: { authorization: 'Bearer k' },
      })
      .reply(200, '{"ok":true}', { headers: { Deprecation: '@1', 'Retry-After': '3' } });
    const response = await transport({
      method: 'PATCH',
      url: 'https://inventory.test/v1/inventory/1',
      headers: { authorization: 'Bearer k' },
      body: '{"quantity":2}',
      timeoutMs: 1000,
    });
    expect(response.status).toBe(200);
    expect(response.text).toBe('{"ok":true}');
    expect(response.header('deprecation')).toBe('@1');
    expect(response.header('Retry-After')).toBe('3');
    expect(response.header('sunset')).toBeNull();
  });

  it('sends to origin and path when the caller split the URL already, without parsing url', async () => {
    pool.intercept({ path: '/v1/inventory/7', method: 'PATCH' }).reply(200, '{}');
    const response = await transport({
      method: 'PATCH',
      url: 'only for messages',
      origin: 'https://inventory.test',
      path: '/v1/inventory/7',
      headers: {},
      body: '{"quantity":1}',
      timeoutMs: 1000,
    });
    expect(response.status).toBe(200);
  });

  it('turns a connection error into a network TransportError with its code', async () => {
    pool
      .intercept({ path: '/v1/inventory', method: 'GET' })
      .replyWithError(Object.assign(new Error('reset'), { code: 'ECONNRESET' }));
    const error = await transport({
      method: 'GET',
      url: 'https://inventory.test/v1/inventory',
      headers: {},
      timeoutMs: 1000,
    }).catch((caught) => caught);
    expect(error).toBeInstanceOf(TransportError);
    expect(error).toMatchObject({ reason: 'network', detail: 'ECONNRESET' });
  });
});

/** The CLI's two transports: undici (bulk runs, proxies, the library) and node:http (one request at a time). */
const TRANSPORTS: [string, () => Transport][] = [
  ['undiciTransport', () => undiciTransport(new Agent())],
  ['httpTransport', () => httpTransport()],
];

describe.each(TRANSPORTS)('%s against real sockets', (_name, makeTransport) => {
  const slow = useFakeServer((req, res) => setTimeout(() => answer(200, 'late')(req, res), 500));

  it('reports an answer slower than the timeout as a timeout', async () => {
    const transport = makeTransport();
    const url = `${slow.origin}/v1/inventory`;
    const error = await transport({ method: 'GET', url, headers: {}, timeoutMs: 50 }).catch(
      (caught) => caught,
    );
    expect(error).toMatchObject({ reason: 'timeout', detail: 'TimeoutError' });
  });

  it('reports a refused connection as a network error', async () => {
    const port = await closedPort();
    const transport = makeTransport();
    const error = await transport({
      method: 'GET',
      url: `http://127.0.0.1:${port}/v1/inventory`,
      headers: {},
      timeoutMs: 1000,
    }).catch((caught) => caught);
    expect(error).toMatchObject({ reason: 'network', detail: 'ECONNREFUSED' });
  });
});

describe('undiciTransport through a proxy', () => {
  // A proxy that cannot reach anything: every CONNECT is answered 502.
  const refusing = useFakeServer(answer(501));

  it('blames a proxy it cannot connect to, and reports a refused tunnel as the proxy’s answer', async () => {
    const port = await closedPort();
    const request = {
      method: 'GET',
      url: 'https://inventory.test/v1/inventory',
      headers: {},
      timeoutMs: 2000,
    };

    const down = undiciTransport(new ProxyAgent(`http://127.0.0.1:${port}`), { proxy: 'the proxy P' });
    expect(await down(request).catch((caught) => caught)).toMatchObject({
      reason: 'network',
      detail: 'ECONNREFUSED',
      unreachable: 'the proxy P',
    });
    refusing.server.on('connect', (_req, socket) => socket.end('HTTP/1.1 502 Bad Gateway\r\n\r\n'));
    const refusingTunnel = undiciTransport(new ProxyAgent(refusing.origin), { proxy: 'the proxy R' });
    const error = await refusingTunnel(request).catch((caught) => caught);
    expect(error).toMatchObject({ reason: 'network', detail: 'the proxy R answered 502 to CONNECT' });
    expect(error.unreachable).toBeUndefined();
  });
});

describe.each(TRANSPORTS)('%s against hostile servers', (_name, makeTransport) => {
  const closedEarly: string[] = [];
  const hostile = useFakeServer((req, res) => {
    res.on('close', () => {
      if (!res.writableFinished) closedEarly.push(String(req.url));
    });
    byScenario({
      // Claims a terabyte, sends one byte, and keeps the connection open.
      'declared-huge': (_req, res) => {
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': String(2 ** 40) });
        res.write('[');
      },
      endless: endless(' '),
      trickle,
      declared: answer(200, '[]'.padEnd(4096)),
      pieces: inTurn(['[1', ',2', ']', (r) => r.end()]),
    })(req, res);
  });
  const get = (path: string, timeoutMs: number, maxBodyBytes?: number) =>
    makeTransport()({
      method: 'GET',
      url: hostile.origin + path,
      headers: {},
      timeoutMs,
      maxBodyBytes,
    }).catch((caught) => caught);

  it('cuts off an endless body at the limit and drops the connection', async () => {
    const error = await get('/endless', 10_000, 1024 * 1024);
    expect(error).toBeInstanceOf(TransportError);
    expect(error).toMatchObject({ reason: 'too large', detail: String(1024 * 1024) });
    await vi.waitFor(() => expect(closedEarly).toContain('/endless'));
  });

  it('refuses a body whose Content-Length is over the limit before reading it', async () => {
    expect(await get('/declared', 10_000, 1000)).toMatchObject({ reason: 'too large' });
  });

  it('drops the connection of a body refused by its Content-Length at once, not at the timeout', async () => {
    // Left unread, the body held the connection, and petinv's exit, until the attempt's deadline.
    expect(await get('/declared-huge', 60_000, 1000)).toMatchObject({ reason: 'too large' });
    await vi.waitFor(() => expect(closedEarly).toContain('/declared-huge'));
  });

  it('ends a trickling body within the timeout: the deadline covers reading the body', async () => {
    expect(await get('/trickle', 200)).toMatchObject({ reason: 'timeout' });
    await vi.waitFor(() => expect(closedEarly).toContain('/trickle'));
  });

  it('streams a body to its reader, not counting the time the reader holds a chunk against the timeout', async () => {
    const response = await makeTransport()({
      method: 'GET',
      url: `${hostile.origin}/pieces`,
      headers: {},
      timeoutMs: 300,
      stream: true,
    });
    const pieces: string[] = [];
    for await (const chunk of response.body ?? []) {
      pieces.push(Buffer.from(chunk).toString());
      // Longer than the whole timeout: a slow reader of petinv's output is not a slow service.
      if (pieces.length === 1) await new Promise((resolve) => setTimeout(resolve, 400));
    }
    expect(pieces.join('')).toBe('[1,2]');
  });

  it('still ends a streamed body whose service stops sending, at the timeout', async () => {
    const response = await makeTransport()({
      method: 'GET',
      url: `${hostile.origin}/trickle`,
      headers: {},
      timeoutMs: 200,
      stream: true,
    });
    const read = async () => {
      for await (const _chunk of response.body ?? []);
    };
    expect(await read().catch((caught) => caught)).toMatchObject({ reason: 'timeout', brokeOff: true });
  });
});

describe('httpTransport and kept connections', () => {
  // Answers the first request on a connection and keeps it; drops unread any later one, as a service does
  // whose idle timer closes the connection just as a request arrives on it.
  const served = new WeakMap<object, number>();
  const server = useRawServer(({ method, socket }) => {
    const count = (served.get(socket) ?? 0) + 1;
    served.set(socket, count);
    if (count > 1) return socket.end();
    const body = method === 'GET' ? '[]' : '{"petId":1,"quantity":7,"status":"sold"}';
    socket.write(
      `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
  });

  it('sends a write on a connection of its own, never on one a read kept', async () => {
    const transport = httpTransport();
    const url = `${server.origin}/v1/inventory`;
    expect(await transport({ method: 'GET', url, headers: {}, timeoutMs: 2000 })).toMatchObject({
      status: 200,
    });
    const patch = { method: 'PATCH', url: `${url}/1`, headers: {}, body: '{"quantity":7}', timeoutMs: 2000 };
    expect(await transport(patch)).toMatchObject({ status: 200 });
    expect(await transport(patch)).toMatchObject({ status: 200 });
  });
});
