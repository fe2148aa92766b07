import { configError } from '../errors';
import { displayUrl, isLoopbackHost } from './settings';

/** The proxy a run goes through, and the variable that named it (for messages). */
export type ChosenProxy = { url: URL; variable: string };

const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443 };

function firstSet(env: NodeJS.ProcessEnv, names: string[]): [string, string] | undefined {
  const name = names.find((each) => env[each]?.trim());
  return name === undefined ? undefined : [name, (env[name] as string).trim()];
}

/** NO_PROXY as curl and undici read it: host or .domain or *.domain entries, with an optional :port; * means all. */
function bypassedByNoProxy(target: URL, noProxy: string): boolean {
  const host = target.hostname.toLowerCase();
  const port = Number(target.port) || DEFAULT_PORTS[target.protocol] || 0;
  return noProxy.split(/[,\s]+/).some((entry) => {
    if (entry === '') return false;
    if (entry === '*') return true;
    const withPort = /^(.+):(\d+)$/.exec(entry);
    if (withPort && Number(withPort[2]) !== port) return false;
    const name = (withPort?.[1] ?? entry).replace(/^\*?\./, '').toLowerCase();
    return host === name || host.endsWith(`.${name}`);
  });
}

/**
 * The proxy for requests to `target`, from HTTPS_PROXY/HTTP_PROXY and NO_PROXY, either case (https falls
 * back to HTTP_PROXY, as undici's EnvHttpProxyAgent does). Never for a loopback service, as curl and Go:
 * the key for a service on this machine stays on it.
 */
export function chooseProxy(target: URL, env: NodeJS.ProcessEnv): ChosenProxy | undefined {
  if (isLoopbackHost(target.hostname)) return undefined;
  const names =
    target.protocol === 'https:'
      ? ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy']
      : ['HTTP_PROXY', 'http_proxy'];
  const chosen = firstSet(env, names);
  if (chosen === undefined) return undefined;
  const noProxy = firstSet(env, ['NO_PROXY', 'no_proxy']);
  if (noProxy && bypassedByNoProxy(target, noProxy[1])) return undefined;

  const [variable, value] = chosen;
  const unusable = (why: string) =>
    configError(`${variable} "${displayUrl(value)}" ${why}; set it to http://host:port or https://host:port`);
  const url = URL.parse(value);
  if (!url) throw unusable('is not a URL');
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw unusable('is not an http or https proxy, the only kinds petinv uses');
  if (url.hostname === '') throw unusable('names no host');
  if (url.href.includes('?') || url.href.includes('#') || url.pathname !== '/')
    throw unusable('has a path, query or fragment, which a proxy address cannot have');
  return { url, variable };
}

/** The proxy as messages name it: its address without credentials, and where it came from. */
export function describeProxy(proxy: ChosenProxy): string {
  return `the proxy ${proxy.url.origin} (from ${proxy.variable})`;
}
