import type { Dispatcher } from 'undici';
import Agent from 'undici/lib/dispatcher/agent.js';

/** The undici modules petinv needs, one by one: undici's index loads all it has, 40 ms of a start. */

export type { Dispatcher };

/**
 * How many connections a bulk run opens to the service, and how many updates each carries at once
 * (HTTP/1.1 pipelining: the next request written before the answer to the one before it arrives).
 * Without a shape, connections are opened as requests need them, one request on each at a time.
 */
export type ConnectionShape = { connections: number; pipelining: number };

export function createAgent(connectTimeoutMs: number, shape?: ConnectionShape): Dispatcher {
  return new Agent({ connect: { timeout: connectTimeoutMs }, ...shape });
}

/**
 * A dispatcher that sends every request through one proxy (chosen by src/config/proxy.ts). It tunnels
 * with CONNECT, which undici's index installs on its dispatchers, so this one path loads the whole of undici.
 */
export async function createProxyAgent(connectTimeoutMs: number, proxyUrl: string, shape?: ConnectionShape) {
  // undici is CommonJS: its exports object is the default export, bundled or not.
  const undici = (await import('undici')) as unknown as { default: typeof import('undici') };
  const { ProxyAgent } = undici.default;
  // The shape is the tunnels': each is a connection to the service, which the proxy only relays.
  // proxyTunnel: a CONNECT tunnel for http services too, as for https (undici 8 forwards plain HTTP by default).
  return new ProxyAgent({
    uri: proxyUrl,
    proxyTunnel: true,
    connect: { timeout: connectTimeoutMs },
    ...shape,
  });
}
