import { MockAgent } from 'undici';
import { afterEach, beforeEach, expect } from 'vitest';
import type { Transport } from '../../src/client/transport';
import { undiciTransport } from '../../src/client/undici-transport';

/**
 * The service at `base` as undici's MockAgent plays it, for the tests of one file, under the transport the
 * CLI runs (undiciTransport takes the agent as its dispatcher). Each test gets a fresh agent, nothing
 * reaches a network, and every answer a test sets up must have been asked for by its end. MockAgent
 * never tells a handler that the request was written whole: what depends on that (a write that may have
 * been applied) is tested against a raw server (lying-server.ts).
 */
export function useMockService(base: string) {
  const { origin, pathname } = new URL(base);
  let agent: MockAgent;
  let inner: Transport;
  beforeEach(() => {
    agent = new MockAgent();
    agent.disableNetConnect();
    inner = undiciTransport(agent);
  });
  afterEach(async () => {
    const pending = agent.pendingInterceptors().map(({ method, path }) => `${method} ${path}`);
    await agent.close();
    expect(pending).toEqual([]);
  });
  return {
    transport: ((request) => inner(request)) as Transport,
    /** An answer to the next request for `path` below the base, as `match` narrows it (body, headers). */
    mock: (method: string, path: string, match: { body?: string; headers?: Record<string, string> } = {}) =>
      agent.get(origin).intercept({ method, path: `${pathname}${path}`, ...match }),
  };
}
