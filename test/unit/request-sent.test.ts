import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TransportError } from '../../src/client/transport';
import { createAgent } from '../../src/client/undici';
import { undiciTransport } from '../../src/client/undici-transport';

/**
 * undici 8 calls onRequestSent on the handler petinv dispatches with (undici 7 wrapped it in a class that
 * dropped the call): an upgrade that stops calling it fails here, rather than every unknown outcome
 * turning silently into "cannot reach" (issue 21).
 */
let server: Server;
let port: number;
let act: (socket: Socket) => void = () => {};

beforeAll(async () => {
  server = createServer((socket) => {
    let text = '';
    socket.on('error', () => {});
    socket.on('data', (chunk) => {
      text += chunk;
      if (text.endsWith('{"quantity":7}')) act(socket);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

async function patch(to: number): Promise<TransportError> {
  const transport = undiciTransport(createAgent(1000));
  const error = await transport({
    method: 'PATCH',
    url: `http://127.0.0.1:${to}/v1/inventory/1`,
    headers: { 'Content-Type': 'application/json' },
    body: '{"quantity":7}',
    timeoutMs: 2000,
  }).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(TransportError);
  return error as TransportError;
}

describe('a TransportError says whether the request was sent whole', () => {
  it.each([
    ['a reset', (socket: Socket) => socket.resetAndDestroy()],
    ['a close before the status line', (socket: Socket) => socket.end()],
    ['a garbage status line', (socket: Socket) => socket.end('NOT HTTP\r\n\r\n')],
  ])('%s after the request: sent', async (_name, breakIt) => {
    act = breakIt;
    const error = await patch(port);
    expect(error.reason).toBe('network');
    expect(error.sent).toBe(true);
  });

  it('no answer before the timeout, after the request: sent', async () => {
    act = () => {};
    const transport = undiciTransport(createAgent(1000));
    const error = (await transport({
      method: 'PATCH',
      url: `http://127.0.0.1:${port}/v1/inventory/1`,
      headers: {},
      body: '{"quantity":7}',
      timeoutMs: 200,
    }).catch((caught: unknown) => caught)) as TransportError;
    expect(error.reason).toBe('timeout');
    expect(error.sent).toBe(true);
  });

  it('a connection refused: not sent', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port: free } = closed.address() as { port: number };
    await new Promise((resolve) => closed.close(resolve));
    const error = await patch(free);
    expect(error.sent).toBe(false);
  });
});
