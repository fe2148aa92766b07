import { version } from '../../package.json';
import { createClient, type InventoryClient, type RetryWait } from '../client/client';
import { createListCache } from '../client/list-cache';
import type { Transport } from '../client/transport';
import { type ConnectionShape, createAgent, createProxyAgent } from '../client/undici';
import { undiciTransport } from '../client/undici-transport';
import { readConfigFile } from '../config/file';
import { cacheDirectory, configFilePath } from '../config/paths';
import { chooseProxy, describeProxy } from '../config/proxy';
import { findServeForLocal } from '../config/serve-records';
import {
  apiKeyProblem,
  checkBaseUrl,
  checkKeyDestination,
  displayUrl,
  isLoopback,
  type ResolveOptions,
  resolveSettings,
  type Settings,
} from '../config/settings';
import { configError, PetinvError } from '../errors';
import type { CommandContext } from '../output/context';
import { createHttpTrace, traceLevel } from '../output/http-trace';
import { shellWord } from '../suggest';
import type { GlobalFlags } from './flags';
import { resolveLimits } from './limits';

export interface Connection {
  client: InventoryClient;
  settings: Settings;
  envName: string;
  baseUrl: string;
  /**
   * Where messages say the command read or wrote: the environment's name when it chose the URL, or the
   * URL's host and port when --base-url or PETINV_BASE_URL did (`updated 2 of 2 pets in 127.0.0.1:4010`,
   * never "in production" against a local serve). An environment named for this command too (--env,
   * PETINV_ENV) is named: the URL was given as that environment's.
   */
  where: string;
}

/** Whether this command line or its environment gave the base URL (--base-url, PETINV_BASE_URL). */
const urlGiven = (settings: Settings) =>
  settings.baseUrl.source === 'flag' || settings.baseUrl.source === 'environment variable';

/** Whether this command line or its environment named the environment (--env, PETINV_ENV). */
const envGiven = (settings: Settings) =>
  settings.env.source === 'flag' || settings.env.source === 'environment variable';

/** See Connection.where. */
export function describeTarget(settings: Settings, baseUrl: string): string {
  if (!urlGiven(settings) || envGiven(settings)) return settings.env.value;
  const url = new URL(baseUrl);
  return `${url.hostname}:${url.port || (url.protocol === 'https:' ? '443' : '80')}`;
}

/**
 * The options that make a suggested command reach the service this one reached, safe to paste: an
 * environment's name is not enough when an address chose the service (`--base-url`, `PETINV_BASE_URL`
 * without `--env`), as `where` is then host:port, which is no environment's name (issue 21).
 */
export function targetWords(settings: Settings, baseUrl: string): string {
  const words: string[] = [];
  if (envGiven(settings) || !urlGiven(settings)) words.push(`--env ${settings.env.value}`);
  if (settings.baseUrl.source === 'flag' || (urlGiven(settings) && !envGiven(settings)))
    words.push(`--base-url ${shellWord(baseUrl)}`);
  return words.join(' ');
}

export function loadSettings(
  flags: GlobalFlags,
  context: CommandContext,
  options: ResolveOptions = {},
): Settings {
  return resolveSettings(flags, context.env, readConfigFile(context.env), configFilePath(context.env), {
    findServe: () => findServeForLocal(context.env),
    ...options,
  });
}

/** The hint for `local` when no serve is registered: the commonest reason it does not answer. */
const START_SERVE = 'start one in another terminal: petinv serve';

/**
 * What to do about a key the service refuses, by where the key came from: logging in again does not help
 * while PETINV_API_KEY (which wins over the stored key) or a running serve's record supplies it.
 */
function refusedKeyAdvice(settings: Settings, envName: string): string {
  const { source, origin } = settings.apiKey;
  if (source === 'environment variable')
    return `the key came from ${origin}, which wins over a stored key: fix it, or unset it to use the key stored by petinv login --env ${envName}`;
  if (source === 'running serve') return `the key came from ${origin}; restart that serve`;
  return `run: petinv login --env ${envName}`;
}

/**
 * `local` with no serve registered falls back to serve's default address; when nothing answers there,
 * the message says that no serve is running, not merely that an address is unreachable.
 */
function explainNoServe(client: InventoryClient, baseUrl: string): InventoryClient {
  const explain = (error: unknown): never => {
    if (error instanceof PetinvError && error.body.code === 'network')
      throw new PetinvError(
        'network',
        `no petinv serve is running for local (nothing answers at ${baseUrl}); ${START_SERVE}`,
        error.body,
      );
    throw error;
  };
  return {
    get storeId() {
      return client.storeId;
    },
    async *streamInventory() {
      try {
        yield* client.streamInventory();
      } catch (error) {
        explain(error);
      }
    },
    listInventory: () => client.listInventory().catch(explain),
    findInventoryItem: (petId) => client.findInventoryItem(petId).catch(explain),
    pollInventory: (etag) => client.pollInventory(etag).catch(explain),
    updateInventory: (petId, quantity) => client.updateInventory(petId, quantity).catch(explain),
  };
}

/**
 * The error for an environment with no URL: how to set one, and, when a `petinv serve` is running, how to
 * use it instead (a newcomer's first `petinv list` after starting serve). `consequence` follows the first
 * clause (`, so no history to show`).
 */
export function noBaseUrlError(envName: string, env: NodeJS.ProcessEnv, consequence = '') {
  const setOne = `petinv env set-url ${envName} https://<host>/v1`;
  const missing = `no base URL for ${envName}${consequence}`;
  const serve = envName === 'local' ? undefined : findServeForLocal(env);
  if (serve === undefined) return configError(`${missing}; set one: ${setOne}`);
  return configError(
    `${missing}; petinv serve is running at ${serve.baseUrl}: use it with --env local, or petinv env use local; or set a URL: ${setOne}`,
  );
}

/**
 * No key for the URL --base-url or PETINV_BASE_URL gave. A key `petinv login` stores goes only to its
 * environment's own URL (checkKeyDestination), so logging in would not help; the message names the address
 * (PETINV_BASE_URL at a local serve: never "no API key for production") and what does: the serve running
 * there through local, which has its key, or the key in PETINV_API_KEY.
 */
function noKeyForAddress(settings: Settings, baseUrl: string, env: NodeJS.ProcessEnv) {
  const given = settings.baseUrl.origin;
  const missing = `no API key for ${describeTarget(settings, baseUrl)} (its URL from ${given})`;
  const serve = findServeForLocal(env);
  if (serve !== undefined && new URL(serve.baseUrl).origin === new URL(baseUrl).origin) {
    const without = settings.baseUrl.source === 'flag' ? 'without --base-url' : 'with PETINV_BASE_URL unset';
    return configError(
      `${missing}; petinv serve is running there: use it with --env local, ${without} (local has its key), or pass its key in PETINV_API_KEY`,
    );
  }
  const name = settings.env.value;
  return configError(
    `${missing}; pass that service's key in PETINV_API_KEY, or point ${name} there and store its key: petinv env set-url ${name} ${shellWord(displayUrl(baseUrl))}, then petinv login --env ${name}`,
  );
}

/** The environment's base URL and API key, or the config error that says what is missing or wrong. */
function endpointOf(settings: Settings, env: NodeJS.ProcessEnv): { baseUrl: string; apiKey: string } {
  const envName = settings.env.value;
  if (settings.baseUrl.value === undefined) throw noBaseUrlError(envName, env);
  const baseUrl = checkBaseUrl(
    settings.baseUrl.value,
    `base URL of ${envName} (from ${settings.baseUrl.origin})`,
    settings.baseUrl.source === 'flag' ? 'usage' : 'config',
  );
  const apiKey = settings.apiKey.value;
  if (apiKey === undefined && urlGiven(settings)) throw noKeyForAddress(settings, baseUrl, env);
  if (apiKey === undefined) {
    const hint =
      envName === 'local' && settings.baseUrl.source === 'default'
        ? `no petinv serve is running; ${START_SERVE} (it stores its key for local), or run: petinv login --env local`
        : envName === 'local'
          ? 'start petinv serve, which stores its key for local, or run: petinv login --env local'
          : `run: petinv login --env ${envName}`;
    throw configError(`no API key for ${envName}; ${hint}`);
  }
  const keyProblem = apiKeyProblem(apiKey);
  if (keyProblem) {
    const fix =
      settings.apiKey.source === 'config file'
        ? `store it again: petinv login --env ${envName}`
        : `fix ${settings.apiKey.origin}`;
    throw configError(`the API key for ${envName} (from ${settings.apiKey.origin}) ${keyProblem}; ${fix}`);
  }
  checkKeyDestination(settings, baseUrl);
  // With no serve found, local's address is only serve's default port, and whatever holds it (another
  // user's process included) would be handed the stored key: that key goes only to a serve petinv found
  // running (its record), or to an address the user chose.
  if (
    envName === 'local' &&
    settings.baseUrl.source === 'default' &&
    settings.apiKey.source === 'config file'
  )
    throw new PetinvError(
      'network',
      `no petinv serve is running for local (none left a record), so its stored API key is sent nowhere; ${START_SERVE}, or point local at a service, which its stored key would then go to: petinv env set-url local http://127.0.0.1:PORT/v1`,
      { code: 'network' },
    );
  return { baseUrl, apiKey };
}

/**
 * How requests travel to `baseUrl`: directly or through the proxy the environment names, traced with -v;
 * refused when the key would leave the machine in clear text.
 */
async function transportTo(
  baseUrl: string,
  apiKey: string,
  envName: string,
  flags: GlobalFlags,
  context: CommandContext,
  onRetryWait: ((wait: RetryWait) => void) | undefined,
  shape: ConnectionShape | undefined,
): Promise<{ transport: Transport; onRetryWait: ((wait: RetryWait) => void) | undefined }> {
  const url = new URL(baseUrl);
  const proxy = chooseProxy(url, context.env);
  // The key leaves this machine unencrypted only over http to a host that is not loopback. Through a proxy
  // the same holds: a loopback service is never proxied, an http service is carried as clear text by the
  // proxy's CONNECT tunnel (first hop and last), and an https service is encrypted end to end inside it.
  if (url.protocol === 'http:' && !isLoopback(url) && !flags.insecure) {
    const via = proxy ? ` through ${describeProxy(proxy)}` : '';
    throw configError(
      `refusing to send the API key for ${envName} in clear text to ${baseUrl}${via}; use an https URL, or pass --insecure`,
    );
  }

  const timeoutMs = flags.timeout;
  // A bulk run's connections, at most --concurrency of them (with --pipelining 1 too: undici would open
  // another whenever an update came before the last answer's connection was free), each of which may
  // carry several updates once the service shows it keeps connections (undici-transport.ts).
  const pipelines = shape !== undefined && shape.pipelining > 1;
  const dispatcher = proxy
    ? await createProxyAgent(timeoutMs, proxy.url.href, shape)
    : createAgent(timeoutMs, shape);
  const transport = undiciTransport(dispatcher, {
    proxy: proxy && describeProxy(proxy),
    pipelining: pipelines ? { connections: shape.connections } : undefined,
  });
  const level = traceLevel(flags.verbose, context.env);
  if (level === 0) return { transport, onRetryWait };
  const trace = createHttpTrace({
    level,
    write: (line) => context.stderr.write(`${line}\n`),
    secrets: [apiKey],
  });
  return {
    transport: trace.transport(transport),
    onRetryWait: (wait) => {
      trace.onRetryWait(wait);
      onRetryWait?.(wait);
    },
  };
}

/** Resolves the environment and builds the client, refusing what would fail or leak before any request. */
export async function connect(
  flags: GlobalFlags,
  context: CommandContext,
  options: {
    /** A key to use as if it were stored for the environment (login checks one before storing it). */
    apiKey?: string;
    /** A bulk run's connections (see bulkShape in options.ts); otherwise one request on each at a time. */
    shape?: ConnectionShape;
  } = {},
): Promise<Connection> {
  const { timeout: timeoutMs, retries } = flags;
  const limits = resolveLimits(flags, context);
  const loaded = loadSettings(flags, context);
  const settings: Settings =
    options.apiKey === undefined
      ? loaded
      : { ...loaded, apiKey: { value: options.apiKey, source: 'config file', origin: 'petinv login' } };
  const envName = settings.env.value;
  const { baseUrl, apiKey } = endpointOf(settings, context.env);
  const where = describeTarget(settings, baseUrl);
  const { transport, onRetryWait } = await transportTo(
    baseUrl,
    apiKey,
    envName,
    flags,
    context,
    limits.onRetryWait,
    options.shape,
  );

  const client = createClient({
    baseUrl,
    apiKey,
    envName: where,
    targetWords: targetWords(settings, baseUrl),
    addressed: where !== envName,
    timeoutMs,
    retries,
    ...limits,
    onRetryWait,
    transport,
    userAgent: `petinv/${version}`,
    // With --json, a warning is a JSON line, as the failure after it may be, so that a script reads both.
    onWarning: (message) =>
      context.stderr.write(
        context.json ? `${JSON.stringify({ warning: { message } })}\n` : `petinv: warning: ${message}\n`,
      ),
    refusedKeyAdvice: refusedKeyAdvice(settings, envName),
    listCache:
      flags.cache === false
        ? undefined
        : createListCache({
            directory: cacheDirectory(context.env),
            envName,
            baseUrl,
            maxBodyBytes: limits.maxBodyBytes,
          }),
  });
  const noServe = envName === 'local' && settings.baseUrl.source === 'default';
  return { client: noServe ? explainNoServe(client, baseUrl) : client, settings, envName, baseUrl, where };
}
