import { isIPv4 } from 'node:net';
import { DEFAULT_BASE_URL } from '../contract/defaults';
import { configError, usageError } from '../errors';
import { plural } from '../output/plural';
import { printable } from '../printable';
import { nearestName, shellWord } from '../suggest';

export const BUILTIN_ENVIRONMENTS = ['production', 'staging', 'local'] as const;
export const DEFAULT_ENVIRONMENT = 'production';

export type Source = 'flag' | 'environment variable' | 'config file' | 'running serve' | 'default';

export interface Resolved<T> {
  value: T;
  source: Source;
  /** The flag, variable or file the value came from, for `petinv config`. */
  origin: string;
}

export interface Settings {
  env: Resolved<string>;
  baseUrl: Resolved<string | undefined>;
  apiKey: Resolved<string | undefined>;
  /** For a key from the config file: the base URL stored with it, or the environment's built-in one. */
  keyBaseUrl?: string;
  /** The running `petinv serve` that `local` found, when its address (and key) came from it. */
  serve?: RunningServe;
}

/** What resolveSettings needs of a running serve's record (see serve-records.ts). */
export interface RunningServe {
  baseUrl: string;
  apiKey: string;
  /** Which serve, in words: pid, data file, start time. */
  description: string;
}

export type SettingsFlags = { env?: string; baseUrl?: string };

export interface ResolveOptions {
  /**
   * Whether an environment that is neither built in nor in the config file may be chosen: only for
   * `login`, which asks before creating one. Everywhere else it is a typo, and an error that says so.
   */
  allowUnknownEnvironment?: boolean;
  /** Looks for a running `petinv serve`; asked only for `local` when nothing else sets its address. */
  findServe?: () => RunningServe | undefined;
}

/** What the settings read of the config file, as file.ts hands it over, checked (with the checks below). */
export interface StoredSettings {
  currentEnv?: string;
  environments: Record<string, { baseUrl?: string; apiKey?: string }>;
}

/** What the config file stores for `name`: its own entry only, never `toString` or another member every object has. */
export function storedEnvironment(file: StoredSettings, name: string) {
  return Object.hasOwn(file.environments, name) ? file.environments[name] : undefined;
}

export function knownEnvironments(file: StoredSettings): string[] {
  return [...new Set([...BUILTIN_ENVIRONMENTS, ...Object.keys(file.environments)])];
}

/** What `env set-url` accepts, and so all that a config file, --env or PETINV_ENV may name. */
const ENVIRONMENT_NAME = /^[a-z0-9][a-z0-9_-]{0,39}$/i;

export function environmentNameProblem(name: string): string | undefined {
  return ENVIRONMENT_NAME.test(name)
    ? undefined
    : 'is not an environment name: use letters, digits, - and _ (at most 40)';
}

/** The built-in URL of environment `name`: only `local` has one, `petinv serve`'s default address. */
export const builtinBaseUrl = (name: string): string | undefined =>
  name === 'local' ? DEFAULT_BASE_URL : undefined;

/** The first candidate that is set, in order of precedence, with where it came from; else the fallback. */
function pick<T>(candidates: Array<[T | undefined, Source, string]>, fallback: Resolved<T | undefined>) {
  for (const [value, source, origin] of candidates)
    if (value !== undefined && value !== '') return { value, source, origin };
  return fallback;
}

/** The one place precedence is decided: flag > variable > config file > default; the key has no flag (ps shows flags). */
export function resolveSettings(
  flags: SettingsFlags,
  env: NodeJS.ProcessEnv,
  file: StoredSettings,
  configPath: string,
  options: ResolveOptions = {},
): Settings {
  const envName = pick(
    [
      [flags.env, 'flag', '--env'],
      [env.PETINV_ENV, 'environment variable', 'PETINV_ENV'],
      [file.currentEnv, 'config file', configPath],
    ],
    { value: DEFAULT_ENVIRONMENT, source: 'default', origin: 'default' },
  ) as Resolved<string>;
  // A name from the config file was checked when the file was read.
  const nameProblem = envName.source === 'config file' ? undefined : environmentNameProblem(envName.value);
  if (nameProblem) throw usageError(`${envName.origin} "${printable(envName.value, 60)}" ${nameProblem}`);
  const known = knownEnvironments(file);
  if (!options.allowUnknownEnvironment && !known.includes(envName.value)) {
    const name = envName.value;
    const nearest = nearestName(name, known);
    const message = `unknown environment ${name} (from ${envName.origin}); ${nearest ? `did you mean ${nearest}? ` : ''}known: ${known.join(', ')}; to add it: petinv env set-url ${name} https://<host>/v1`;
    throw envName.source === 'config file' ? configError(message) : usageError(message);
  }
  const stored = storedEnvironment(file, envName.value);
  const builtinUrl = builtinBaseUrl(envName.value);

  const baseUrl = pick(
    [
      [flags.baseUrl, 'flag', '--base-url'],
      [env.PETINV_BASE_URL, 'environment variable', 'PETINV_BASE_URL'],
      [stored?.baseUrl, 'config file', configPath],
    ],
    {
      value: builtinUrl,
      source: 'default',
      origin: builtinUrl ? `built-in address of ${envName.value}` : 'none',
    },
  );
  // A running serve is local's address unless the user gave one, and its key goes with it (and only to it).
  const serve = baseUrl.source === 'default' && envName.value === 'local' ? options.findServe?.() : undefined;
  const fromServe = serve && ({ source: 'running serve', origin: serve.description } as const);
  return {
    env: envName,
    baseUrl: fromServe ? { value: serve.baseUrl, ...fromServe } : baseUrl,
    apiKey: pick(
      [
        [env.PETINV_API_KEY, 'environment variable', 'PETINV_API_KEY'],
        [serve ? undefined : stored?.apiKey, 'config file', configPath],
      ],
      fromServe
        ? { value: serve.apiKey, ...fromServe }
        : { value: undefined, source: 'default', origin: 'none' },
    ),
    keyBaseUrl: serve ? serve.baseUrl : (stored?.baseUrl ?? builtinUrl),
    serve,
  };
}

/** Text from a setting, fit for one line of a message: no control characters, no password, bounded. */
export function displayUrl(text: string): string {
  // Credentials before the host, after `scheme://`, `//` or nothing at all: curl reads
  // `user:password@host` as a proxy with credentials, while a URL parser takes `user:` for the scheme.
  let shown = text.replace(/^((?:[a-z][a-z\d+.-]*:)?\/\/)?[^/?#]*@/i, '$1***@');
  // Null when not a URL: the pattern above already hid anything that looks like credentials.
  const url = URL.parse(text);
  if (url && (url.username || url.password)) {
    url.username = '***';
    url.password = '';
    shown = url.href;
  }
  return printable(shown);
}

/**
 * What is wrong with a base URL, in words that never repeat it (it may hold a password), or undefined.
 * It is checked parsed, as the request will use it: http or https, no user name or password, a path
 * ending in the spec's version segment /v1, no query and no fragment.
 */
export function baseUrlProblem(text: string): string | undefined {
  const url = URL.parse(text);
  if (!url) return "is not a URL; give the service's base address, like https://petstore.example.com/v1";
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL';
  if (url.username !== '' || url.password !== '')
    return 'must not hold a user name or password; petinv authenticates with the API key alone';
  // After parsing, a ? or # in href can only start a query or a fragment (an empty one too).
  if (url.href.includes('?')) return 'must not have a query (?…)';
  if (url.href.includes('#')) return 'must not have a fragment (#…)';
  if (!url.pathname.replace(/\/+$/, '').endsWith('/v1'))
    return 'must end in the version segment /v1, like https://petstore.example.com/v1';
  return undefined;
}

/** A base URL checked (baseUrlProblem), without a trailing slash; refused, a config error, or usage from the command line. */
export function checkBaseUrl(text: string, where: string, refusal: 'usage' | 'config' = 'config'): string {
  const problem = baseUrlProblem(text);
  if (problem !== undefined) {
    const message = `${where}: "${displayUrl(text)}" ${problem}`;
    throw refusal === 'usage' ? usageError(message) : configError(message);
  }
  const url = new URL(text);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/**
 * A stored key goes only to the origin stored with it (or, for `local`, to its built-in address): a
 * --base-url or PETINV_BASE_URL pointing the environment elsewhere would hand the key to another service.
 */
export function checkKeyDestination(settings: Settings, baseUrl: string) {
  const { apiKey, keyBaseUrl, env } = settings;
  // A key from a running serve's record is checked like a stored one: it goes to that serve alone.
  if (apiKey.source !== 'config file' && apiKey.source !== 'running serve') return;
  if (apiKey.source === 'config file' && settings.baseUrl.source === 'config file') return;
  const name = env.value;
  const target = new URL(baseUrl).origin;
  const fix = `pass that service's key in PETINV_API_KEY, or point ${name} there for good, and its stored key with it: petinv env set-url ${name} ${shellWord(displayUrl(baseUrl))}`;
  if (keyBaseUrl === undefined)
    throw configError(
      `the API key stored for ${name} has no address stored with it, so petinv will not send it to ${target} (from ${settings.baseUrl.origin}); ${fix}`,
    );
  const home = new URL(keyBaseUrl).origin;
  if (home !== target)
    throw configError(
      `the API key stored for ${name} belongs to ${home}; refusing to send it to ${target} (from ${settings.baseUrl.origin}); ${fix}`,
    );
}

/** Visible ASCII only: what a bearer token can hold, and what every HTTP stack carries unchanged. */
export const UNSENDABLE_KEY_CHARACTER = /[^!-~]/;

/** Far beyond any real key, far below what servers take in one header (8 KiB is a common limit). */
export const MAX_API_KEY_LENGTH = 4096;

/** Why a key cannot go in an Authorization header, without quoting it, or undefined. */
export function apiKeyProblem(key: string): string | undefined {
  if (key.length > MAX_API_KEY_LENGTH)
    return `is longer than the ${MAX_API_KEY_LENGTH} characters an API key may have`;
  const bad = key.search(UNSENDABLE_KEY_CHARACTER);
  return bad === -1
    ? undefined
    : `holds a character an HTTP header cannot carry (white space, a control or non-ASCII character) at position ${bad + 1}`;
}

/** localhost, 127.0.0.0/8 (also IPv4-mapped) and ::1, bracketed or not: addresses that never leave the machine. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (bare === 'localhost' || bare === '::1' || bare === '0:0:0:0:0:0:0:1') return true;
  const v4 = bare.startsWith('::ffff:') ? bare.slice('::ffff:'.length) : bare;
  return isIPv4(v4) && v4.startsWith('127.');
}

/** Shows enough of a key to tell two apart, never enough to use it: four characters, and only of a long key. */
export function maskKey(key: string): string {
  const length = plural(key.length, 'character');
  return key.length >= 16 ? `${key.slice(0, 4)}… (${length})` : `**** (${length})`;
}
