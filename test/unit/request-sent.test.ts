import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { httpTransport } from '../../src/client/http-transport';
import { type Transport, TransportError } from '../../src/client/transport';
import { createAgent } from '../../src/client/undici';
import { undiciTransport } from '../../src/client/undici-transport';
import { BREAKS, useRawServer } from '../helpers/lying-server';
import { closedPort } from '../helpers/serve';

/**
 * undici 8 calls onRequestSent on the handler petinv dispatches with (undici 7 wrapped it in a class that
 * dropped the call): an upgrade that stops calling it fails here, rather than every unknown outcome
 * turning silently into "cannot reach" (issue 21).
 */
let act: (socket: Socket) => void = () => {};
const server = useRawServer(({ socket }) => act(socket));

async function patch(transport: Transport, to: number): Promise<TransportError> {
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

describe.each([
  ['undici', () => undiciTransport(createAgent(1000))],
  ['node:http', () => httpTransport()],
])('a TransportError from %s says whether the request was sent whole', (_name, makeTransport) => {
  it.each([
    ['a reset', BREAKS.reset],
    ['a close before the status line', BREAKS.closed],
    ['a garbage status line', BREAKS.garbage],
  ])('%s after the request: sent', async (_name, breakIt) => {
    act = breakIt as (socket: Socket) => void;
    const error = await patch(makeTransport(), server.port);
    expect(error.reason).toBe('network');
    expect(error.sent).toBe(true);
  });

  it('no answer before the timeout, after the request: sent', async () => {
    act = () => {};
    const transport = makeTransport();
    const error = (await transport({
      method: 'PATCH',
      url: `${server.origin}/v1/inventory/1`,
      headers: {},
      body: '{"quantity":7}',
      timeoutMs: 200,
    }).catch((caught: unknown) => caught)) as TransportError;
    expect(error.reason).toBe('timeout');
    expect(error.sent).toBe(true);
  });

  it('a connection refused: not sent', async () => {
    const error = await patch(makeTransport(), await closedPort());
    expect(error.sent).toBe(false);
  });
});
