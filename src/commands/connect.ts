import { version } from '../../package.json';
import { createClient, DEFAULT_RETRIES, DEFAULT_TIMEOUT_MS, type InventoryClient } from '../api/client';
import { undiciTransport } from '../api/transport';
import { createAgent, createProxyAgent } from '../api/undici';
import { readConfigFile } from '../config/file';
import { configFilePath } from '../config/paths';
import { chooseProxy, describeProxy } from '../config/proxy';
import {
  apiKeyProblem,
  checkBaseUrl,
  checkKeyDestination,
  isLoopback,
  resolveSettings,
  type Settings,
} from '../config/settings';
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
  const keyProblem = apiKeyProblem(apiKey);
  if (keyProblem) {
    const fix =
      settings.apiKey.source === 'config file'
        ? `store it again: petinv login --env ${envName}`
        : `fix ${settings.apiKey.origin}`;
    throw configError(`the API key for ${envName} (from ${settings.apiKey.origin}) ${keyProblem}; ${fix}`);
  }
  checkKeyDestination(settings, baseUrl);

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

  const dispatcher = proxy ? await createProxyAgent(timeoutMs, proxy.url.href) : createAgent(timeoutMs);

  const client = createClient({
    baseUrl,
    apiKey,
    envName,
    timeoutMs,
    retries,
    ...limits,
    transport: undiciTransport(dispatcher, { proxy: proxy && describeProxy(proxy) }),
    userAgent: `petinv/${version}`,
    onWarning: (message) => context.stderr.write(`petinv: warning: ${message}\n`),
  });
  return { client, settings, envName, baseUrl };
}
