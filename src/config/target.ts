import { configError, PetinvError } from '../errors';
import { shellWord } from '../suggest';
import { readConfigFile } from './file';
import { configFilePath } from './paths';
import { findServeForLocal } from './serve-records';
import {
  apiKeyProblem,
  checkBaseUrl,
  checkKeyDestination,
  displayUrl,
  type ResolveOptions,
  resolveSettings,
  type Settings,
  type SettingsFlags,
} from './settings';

/** Where a command's requests go, decided once at its edge: the checked URL and key, and the service's name in messages. */
export interface Target {
  envName: string;
  baseUrl: string;
  apiKey: string;
  /**
   * Where messages say the command read or wrote: the environment's name, or the URL's host:port when
   * --base-url or PETINV_BASE_URL chose it and no --env or PETINV_ENV did (never "in production" locally).
   */
  where: string;
  /** The options that make a suggested command reach this service, safe to paste (issue 21). */
  words: string;
  /** What to do about a key the service refuses, by where the key came from. */
  refusedKeyAdvice: string;
  /** `local` at serve's default address, no serve found: a failure to connect then says none is running. */
  noServe: boolean;
}

/** The settings this command line, the process environment and the config file give (settings.ts). */
export function loadSettings(flags: SettingsFlags, env: NodeJS.ProcessEnv, options: ResolveOptions = {}) {
  return resolveSettings(flags, env, readConfigFile(env), configFilePath(env), {
    findServe: () => findServeForLocal(env),
    ...options,
  });
}

/** The hint for `local` when no serve is registered: the commonest reason it does not answer. */
export const START_SERVE = 'start one in another terminal: petinv serve';

const given = (source: string) => source === 'flag' || source === 'environment variable';

/**
 * The error for an environment with no URL: how to set one, and, when a `petinv serve` is running, how to
 * use it (a newcomer's first `petinv list`). `consequence` follows the first clause (`, so no history`).
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
 * No key for the URL --base-url or PETINV_BASE_URL gave: a stored key goes only to its environment's own
 * URL (checkKeyDestination), so the message names the address, and what helps: the serve running there
 * through local, which has its key, or the key in PETINV_API_KEY.
 */
function noKeyForAddress(settings: Settings, baseUrl: string, where: string, env: NodeJS.ProcessEnv) {
  const missing = `no API key for ${where} (its URL from ${settings.baseUrl.origin})`;
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

/** The key, checked: present, sendable, and bound for its own service; else the error that says what to do. */
function checkedKey(settings: Settings, baseUrl: string, where: string, env: NodeJS.ProcessEnv): string {
  const envName = settings.env.value;
  const { value: apiKey, source, origin } = settings.apiKey;
  const fromDefault = settings.baseUrl.source === 'default';
  if (apiKey === undefined && given(settings.baseUrl.source))
    throw noKeyForAddress(settings, baseUrl, where, env);
  if (apiKey === undefined) {
    const hint =
      envName !== 'local'
        ? `run: petinv login --env ${envName}`
        : fromDefault
          ? `no petinv serve is running; ${START_SERVE} (it stores its key for local), or run: petinv login --env local`
          : 'start petinv serve, which stores its key for local, or run: petinv login --env local';
    throw configError(`no API key for ${envName}; ${hint}`);
  }
  const keyProblem = apiKeyProblem(apiKey);
  if (keyProblem) {
    const fix = source === 'config file' ? `store it again: petinv login --env ${envName}` : `fix ${origin}`;
    throw configError(`the API key for ${envName} (from ${origin}) ${keyProblem}; ${fix}`);
  }
  checkKeyDestination(settings, baseUrl);
  // With no serve found, local's address is only serve's default port, and whatever holds it (another
  // user's process too) would get the stored key: it goes only to a serve found running, or to an address given.
  if (envName === 'local' && fromDefault && source === 'config file')
    throw new PetinvError(
      'network',
      `no petinv serve is running for local (none left a record), so its stored API key is sent nowhere; ${START_SERVE}, or point local at a service, which its stored key would then go to: petinv env set-url local http://127.0.0.1:PORT/v1`,
    );
  return apiKey;
}

/** Logging in again does not help while PETINV_API_KEY (it wins) or a running serve's record supplies the key. */
function refusedKeyAdvice({ apiKey }: Settings, envName: string): string {
  if (apiKey.source === 'environment variable')
    return `the key came from ${apiKey.origin}, which wins over a stored key: fix it, or unset it to use the key stored by petinv login --env ${envName}`;
  if (apiKey.source === 'running serve') return `the key came from ${apiKey.origin}; restart that serve`;
  return `run: petinv login --env ${envName}`;
}

/** The service the settings point at, refusing what would fail or leak before any request. */
export function resolveTarget(settings: Settings, env: NodeJS.ProcessEnv): Target {
  const envName = settings.env.value;
  const { value, source, origin } = settings.baseUrl;
  if (value === undefined) throw noBaseUrlError(envName, env);
  const baseUrl = checkBaseUrl(
    value,
    `base URL of ${envName} (from ${origin})`,
    source === 'flag' ? 'usage' : 'config',
  );
  const addressed = given(source) && !given(settings.env.source);
  const url = new URL(baseUrl);
  const where = addressed
    ? `${url.hostname}:${url.port || (url.protocol === 'https:' ? '443' : '80')}`
    : envName;
  const words = [
    ...(addressed ? [] : [`--env ${envName}`]),
    ...(source === 'flag' || addressed ? [`--base-url ${shellWord(baseUrl)}`] : []),
  ].join(' ');
  return {
    envName,
    baseUrl,
    apiKey: checkedKey(settings, baseUrl, where, env),
    where,
    words,
    refusedKeyAdvice: refusedKeyAdvice(settings, envName),
    noServe: envName === 'local' && source === 'default',
  };
}
