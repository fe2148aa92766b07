import { describe, expect, it } from 'vitest';
import { type Attempts, type RetryPolicy, retrying } from '../../src/client/retry';
import { TransportError, type TransportResponse } from '../../src/client/transport';

/** The retry layer alone: attempts that answer or fail as a script says, and the waits it takes. */

const answer = (status: number, headers: Record<string, string> = {}): TransportResponse => ({
  status,
  header: (name) => headers[name.toLowerCase()] ?? null,
  text: '',
});

function run(script: (TransportResponse | TransportError)[], policy: Partial<RetryPolicy> = {}) {
  const sleeps: number[] = [];
  const attempts: Attempts = { made: 0 };
  let next = 0;
  const result = retrying(
    {
      retries: 3,
      maxRetryWaitMs: 60_000,
      sleep: async (ms) => void sleeps.push(ms),
      random: () => 0.5,
      ...policy,
    },
    'GET /inventory',
    async () => {
      const step = script[next++];
      if (step instanceof TransportError) throw step;
      return step as TransportResponse;
    },
    attempts,
  );
  return { result: result.catch((error: unknown) => error), sleeps, attempts };
}

describe('the retry layer', () => {
  it('sends again after 429, 502, 503, 504 and a network failure, with backoff, and hands over the answer', async () => {
    const { result, sleeps, attempts } = run(
      [answer(502), new TransportError('network', 'ECONNRESET'), answer(503), answer(200)],
      { retries: 5 },
    );
    expect(((await result) as TransportResponse).status).toBe(200);
    expect(sleeps).toEqual([100, 200, 400]);
    expect(attempts).toEqual({ made: 4 });
  });

  it('returns a status not worth retrying at once, and the last retryable one when attempts run out', async () => {
    expect(((await run([answer(409)]).result) as TransportResponse).status).toBe(409);
    const { result, attempts } = run([answer(503), answer(503)], { retries: 1 });
    expect(((await result) as TransportResponse).status).toBe(503);
    expect(attempts.made).toBe(2);
  });

  it('throws the last TransportError, keeping the first attempt that was sent and got no whole answer', async () => {
    const lost = new TransportError('network', 'ECONNRESET', undefined, false, true);
    const last = new TransportError('timeout', 'TimeoutError');
    const { result, attempts } = run([new TransportError('network', 'ECONNREFUSED'), lost, last], {
      retries: 2,
    });
    expect(await result).toBe(last);
    expect(attempts).toEqual({ made: 3, lost });
  });

  it('never retries a certificate or a body too large, nor an error that is not the transport', async () => {
    for (const error of [
      new TransportError('tls', 'x'),
      new TransportError('too large', '2'),
      new Error('mine'),
    ]) {
      const { result, sleeps } = run([error as TransportError]);
      expect(await result).toBe(error);
      expect(sleeps).toEqual([]);
    }
  });

  it('keeps to the budget, noting a Retry-After it refused', async () => {
    const waits: unknown[] = [];
    const { result, sleeps, attempts } = run(
      [
        answer(429, { 'retry-after': '20' }),
        answer(429, { 'retry-after': '20' }),
        answer(429, { 'retry-after': '20' }),
      ],
      { maxRetryWaitMs: 30_000, onRetryWait: (wait) => waits.push(wait) },
    );
    expect(((await result) as TransportResponse).status).toBe(429);
    expect(sleeps).toEqual([20_000]);
    expect(waits).toEqual([{ operation: 'GET /inventory', ms: 20_000, status: 429, retryAfter: true }]);
    expect(attempts).toEqual({ made: 2, refusedWaitMs: 20_000 });
  });
});
