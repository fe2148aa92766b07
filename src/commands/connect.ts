import { version } from '../../package.json';
import { createClient, DEFAULT_RETRIES, DEFAULT_TIMEOUT_MS, type InventoryClient } from '../api/client';
import { undiciTransport } from '../api/transport';
import { createAgent, createProxyAgent } from '../api/undici';
import { readConfigFile } from '../config/file';
import { configFilePath } from '../config/paths';
import { checkBaseUrl, isLoopback, resolveSettings, type Settings } from '../config/settings';
import { configError } from '../errors';
import { parseWholeNumber } from './arguments';
import type { CommandContext } from './context';
import { type LimitFlags, resolveLimits } from './limits';

/** The options every command that talks to the service shares; commander puts them on the program. */
export interface ConnectionFlags extends LimitFlags {
  env?: string;
  baseUrl?: string;
  timeout?: string;
  retries?: string;
  insecure?: boolean;
}

export interface Connection {
  client: InventoryClient;
  settings: Settings;
  envName: string;
  baseUrl: string;
}

const PROXY_VARIABLES = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy'];

export function loadSettings(flags: ConnectionFlags, context: CommandContext): Settings {
  return resolveSettings(flags, context.env, readConfigFile(context.env), configFilePath(context.env));
}

/** Resolves the environment and builds the client, refusing what would fail or leak before any request. */
export async function connect(flags: ConnectionFlags, context: CommandContext): Promise<Connection> {
  const timeoutMs = parseWholeNumber(flags.timeout, '--timeout', 1, 600_000) ?? DEFAULT_TIMEOUT_MS;
  const retries = parseWholeNumber(flags.retries, '--retries', 0, 10) ?? DEFAULT_RETRIES;
  const limits = resolveLimits(flags, context);
  const settings = loadSettings(flags, context);
  const envName = settings.env.value;

  if (settings.baseUrl.value === undefined) {
    throw configError(`no base URL for ${envName}; set one: petinv env set-url ${envName} https://<host>/v1`);
  }
  const baseUrl = checkBaseUrl(
    settings.baseUrl.value,
    `base URL of ${envName} (from ${settings.baseUrl.origin})`,
  );
  const apiKey = settings.apiKey.value;
  if (apiKey === undefined) {
    const hint =
      envName === 'local'
        ? 'start petinv serve, which stores its key for local, or run: petinv login --env local'
        : `run: petinv login --env ${envName}`;
    throw configError(`no API key for ${envName}; ${hint}`);
  }
  const url = new URL(baseUrl);
  if (url.protocol === 'http:' && !isLoopback(url) && !flags.insecure) {
    throw configError(
      `refusing to send the API key for ${envName} in clear text to ${baseUrl}; use an https URL, or pass --insecure`,
    );
  }

  // Proxy variables are honoured through undici's EnvHttpProxyAgent, NO_PROXY included.
  const dispatcher = PROXY_VARIABLES.some((name) => context.env[name])
    ? await createProxyAgent(timeoutMs, {
        httpProxy: context.env.HTTP_PROXY ?? context.env.http_proxy,
        httpsProxy: context.env.HTTPS_PROXY ?? context.env.https_proxy,
        noProxy: context.env.NO_PROXY ?? context.env.no_proxy,
      })
    : createAgent(timeoutMs);

  const client = createClient({
    baseUrl,
    apiKey,
    envName,
    timeoutMs,
    retries,
    ...limits,
    transport: undiciTransport(dispatcher),
    userAgent: `petinv/${version}`,
    onWarning: (message) => context.stderr.write(`petinv: warning: ${message}\n`),
  });
  return { client, settings, envName, baseUrl };
}
