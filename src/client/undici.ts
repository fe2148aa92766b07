import type { Dispatcher } from 'undici';
import Agent from 'undici/lib/dispatcher/agent.js';

/**
 * The undici modules petinv needs, imported one by one: undici's index loads every dispatcher, mock
 * and interceptor it has, which costs a command-line start about 40 ms it does not need.
 */

export type { Dispatcher };

export function createAgent(connectTimeoutMs: number): Dispatcher {
  return new Agent({ connect: { timeout: connectTimeoutMs } });
}

/**
 * A dispatcher that sends every request through one proxy (chosen by src/config/proxy.ts). It tunnels
 * with CONNECT, which undici's index installs on its dispatchers, so this one path loads the whole of undici.
 */
export async function createProxyAgent(connectTimeoutMs: number, proxyUrl: string): Promise<Dispatcher> {
  // undici is CommonJS: its exports object is the default export, bundled or not.
  const undici = (await import('undici')) as unknown as { default: typeof import('undici') };
  const { ProxyAgent } = undici.default;
  return new ProxyAgent({ uri: proxyUrl, connect: { timeout: connectTimeoutMs } });
}
