import type { Dispatcher } from 'undici';
import Agent from 'undici/lib/dispatcher/agent.js';
import UnwrapHandler from 'undici/lib/handler/unwrap-handler.js';

/**
 * The undici modules petinv needs, imported one by one: undici's index loads every dispatcher, mock
 * and interceptor it has, which costs a command-line start about 40 ms it does not need.
 */

export type { Dispatcher };

/**
 * How many connections a bulk run opens to the service, and how many updates each carries at once
 * (HTTP/1.1 pipelining: the next request written before the answer to the one before it arrives).
 * Without a shape, connections are opened as requests need them, one request on each at a time.
 */
export interface ConnectionShape {
  connections: number;
  pipelining: number;
}

export function createAgent(connectTimeoutMs: number, shape?: ConnectionShape): Dispatcher {
  return new Agent({ connect: { timeout: connectTimeoutMs }, ...shape });
}

/**
 * A dispatcher that sends every request through one proxy (chosen by src/config/proxy.ts). It tunnels
 * with CONNECT, which undici's index installs on its dispatchers, so this one path loads the whole of undici.
 */
export async function createProxyAgent(
  connectTimeoutMs: number,
  proxyUrl: string,
  shape?: ConnectionShape,
): Promise<Dispatcher> {
  // undici is CommonJS: its exports object is the default export, bundled or not.
  const undici = (await import('undici')) as unknown as { default: typeof import('undici') };
  const { ProxyAgent } = undici.default;
  // The shape is the tunnels': each is a connection to the service, which the proxy only relays.
  return new ProxyAgent({ uri: proxyUrl, connect: { timeout: connectTimeoutMs }, ...shape });
}

/**
 * A dispatch handler that also hears when the request was written whole. undici calls onRequestSent on
 * the handler it holds, and wraps a handler of the current API (onRequestStart, ...) in an UnwrapHandler
 * that does not pass it on; this one is that wrapper, passing it on. A connection that breaks after it
 * leaves the outcome of a write unknown, where before it the write was surely not applied (issue 21).
 */
export function noticeRequestSent<T extends Dispatcher.DispatchHandler & { onRequestSent(): void }>(
  handler: T,
): Dispatcher.DispatchHandler {
  const unwrapped = new UnwrapHandler(handler) as unknown as Dispatcher.DispatchHandler & {
    onRequestSent?: () => void;
  };
  unwrapped.onRequestSent = () => handler.onRequestSent();
  return unwrapped;
}
