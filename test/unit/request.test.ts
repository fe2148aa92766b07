import { describe, expect, it } from 'vitest';
import { ClientErrors } from '../../src/client/client-errors';
import { createCall } from '../../src/client/request';
import { TransportError, type TransportRequest, type TransportResponse } from '../../src/client/transport';
import type { PetinvError } from '../../src/errors';

/** The call layer alone: its rules for final answers, over a scripted transport (no sockets, no retry waits). */

const answer = (status: number, text = '', headers: Record<string, string> = {}): TransportResponse => ({
  status,
  header: (name) => headers[name.toLowerCase()] ?? null,
  text,
});
const lost = () => new TransportError('network', 'ECONNRESET', undefined, false, true);

function callOver(script: (TransportResponse | TransportError)[]) {
  const sent: TransportRequest[] = [];
  const call = createCall({
    baseUrl: 'http://127.0.0.1:1/v1',
    apiKey: 'k',
    where: 'staging',
    timeoutMs: 1000,
    maxBodyBytes: 1 << 20,
    retries: 2,
    maxRetryWaitMs: 60_000,
    sleep: async () => {},
    random: () => 0,
    errors: new ClientErrors({ where: 'staging', secrets: ['k'], timeoutMs: 1000, maxBodyBytes: 1 << 20 }),
    transport: async (request) => {
      sent.push(request);
      const step = script.shift();
      if (step instanceof TransportError) throw step;
      if (!step) throw new Error('no more answers scripted');
      return step;
    },
  });
  return { call, sent };
}

const settled: TransportError[] = [];
const write = {
  advice: () => 'send it again',
  onSettled: (error: TransportError) => void settled.push(error),
};
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error as PetinvError,
  );

describe('a call judges the final answer', () => {
  it('a write lost once, then answered 409: its outcome is still unknown', async () => {
    const { call, sent } = callOver([
      lost(),
      answer(409, '{"code":"conflict","message":"busy","status":409}'),
    ]);
    const error = await failure(
      call('PATCH', '/inventory/5', '{"quantity":7}', 'pet 5', { unknownOutcome: write }),
    );
    expect(sent).toHaveLength(2);
    expect(error?.body.code).toBe('outcome_unknown');
    expect(error?.message).toContain(
      '(then answered 409 to attempt 2); the update may have been applied; send it again',
    );
  });

  it('a write lost once, then answered 200: the answer, and the caller told of the lost attempt', async () => {
    settled.length = 0;
    const first = lost();
    const { call } = callOver([first, answer(200, '{}')]);
    expect((await call('PATCH', '/inventory/5', '{}', 'pet 5', { unknownOutcome: write })).status).toBe(200);
    expect(settled).toEqual([first]);
  });

  it('a read lost on every attempt is a broken connection, not "cannot reach", and not a write', async () => {
    const { call, sent } = callOver([lost(), lost(), lost()]);
    const error = await failure(call('GET', '/inventory'));
    expect(sent).toHaveLength(3);
    expect(error?.exitCode).toBe(7);
    expect(error?.message).toContain(
      'broke after GET /inventory was sent, before an answer came (ECONNRESET) after 3 attempts',
    );
  });

  it('a 304 to a request that was not conditional breaks the contract; a redirect is refused, never followed', async () => {
    const { call, sent } = callOver([
      answer(304),
      answer(301, '', { location: 'http://elsewhere.test/v1/inventory' }),
    ]);
    expect((await failure(call('GET', '/inventory')))?.body.code).toBe('invalid_response');
    expect((await failure(call('GET', '/inventory')))?.body.code).toBe('redirect');
    expect(sent.map((request) => request.url)).toEqual([
      'http://127.0.0.1:1/v1/inventory',
      'http://127.0.0.1:1/v1/inventory',
    ]);
  });

  it('reads a success within the attempt, so a body that breaks is sent again', async () => {
    const { call, sent } = callOver([answer(200, 'broken'), answer(200, 'whole')]);
    const read = async (response: TransportResponse) => {
      if (response.text === 'broken') throw new TransportError('network', 'ECONNRESET', undefined, true);
      return response.text;
    };
    expect(await call('GET', '/inventory', undefined, undefined, { read })).toBe('whole');
    expect(sent).toHaveLength(2);
    expect(sent[0]?.stream).toBe(true);
  });
});
