import { createServer, type Server } from 'node:http';
import { Agent, MockAgent, ProxyAgent } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { TransportError } from '../../src/client/transport';
import { undiciTransport } from '../../src/client/undici-transport';
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

describe('undiciTransport against real sockets', () => {
  let slow: Server;
  let url: string;
  beforeAll(async () => {
    slow = createServer((_req, res) => setTimeout(() => res.end('late'), 500));
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(slow.address() as { port: number }).port}/v1/inventory`;
  });
  afterAll(() => {
    slow.closeAllConnections();
    return new Promise((resolve) => slow.close(resolve));
  });

  it('reports an answer slower than the timeout as a timeout', async () => {
    const transport = undiciTransport(new Agent());
    const error = await transport({ method: 'GET', url, headers: {}, timeoutMs: 50 }).catch(
      (caught) => caught,
    );
    expect(error).toMatchObject({ reason: 'timeout', detail: 'TimeoutError' });
  });

  it('reports a refused connection as a network error', async () => {
    const port = await closedPort();
    const transport = undiciTransport(new Agent());
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
  let refusing: Server;
  let refusingUrl: string;
  beforeAll(async () => {
    // A proxy that cannot reach anything: every CONNECT is answered 502.
    refusing = createServer((_req, res) => res.writeHead(501).end());
    refusing.on('connect', (_req, socket) => socket.end('HTTP/1.1 502 Bad Gateway\r\n\r\n'));
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
    refusingUrl = `http://127.0.0.1:${(refusing.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise((resolve) => refusing.close(resolve)));

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
    const refusingTunnel = undiciTransport(new ProxyAgent(refusingUrl), { proxy: 'the proxy R' });
    const error = await refusingTunnel(request).catch((caught) => caught);
    expect(error).toMatchObject({ reason: 'network', detail: 'the proxy R answered 502 to CONNECT' });
    expect(error.unreachable).toBeUndefined();
  });
});

describe('undiciTransport against hostile servers', () => {
  let hostile: Server;
  let base: string;
  const closedEarly: string[] = [];
  beforeAll(async () => {
    hostile = createServer((req, res) => {
      res.on('close', () => {
        if (!res.writableFinished) closedEarly.push(String(req.url));
      });
      if (req.url === '/declared-huge') {
        // Claims a terabyte, sends one byte, and keeps the connection open.
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': String(2 ** 40) });
        res.write('[');
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      if (req.url === '/endless') {
        // As fast as the socket takes it, forever.
        const chunk = Buffer.alloc(64 * 1024, 0x20);
        const pump = () => {
          while (!res.destroyed && res.write(chunk)) {}
          if (!res.destroyed) res.once('drain', pump);
        };
        pump();
      } else if (req.url === '/trickle') {
        // A byte every 10 ms: each read is quick, the whole never ends.
        const timer = setInterval(() => res.write(' '), 10);
        res.on('close', () => clearInterval(timer));
      } else if (req.url === '/declared') {
        res.end('[]'.padEnd(4096));
      }
    });
    await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(hostile.address() as { port: number }).port}`;
  });
  afterAll(() => {
    hostile.closeAllConnections();
    return new Promise((resolve) => hostile.close(resolve));
  });
  const get = (path: string, timeoutMs: number, maxBodyBytes?: number) =>
    undiciTransport(new Agent())({
      method: 'GET',
      url: base + path,
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
});
