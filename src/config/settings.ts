import { configError } from '../errors';
import type { ConfigFile } from './file';
import { LOCAL_BASE_URL } from './paths';

export const BUILTIN_ENVIRONMENTS = ['production', 'staging', 'local'] as const;
export const DEFAULT_ENVIRONMENT = 'production';

export type Source = 'flag' | 'environment variable' | 'config file' | 'default';

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
}

export interface SettingsFlags {
  env?: string;
  baseUrl?: string;
}

/** Built-in base URLs: only `local` has one, `petinv serve`'s default address. */
const DEFAULT_BASE_URLS: Record<string, string> = { local: LOCAL_BASE_URL };

/**
 * The one place where precedence is decided: flag > environment variable > config file > default.
 * The API key has no flag, so it never appears on a command line.
 */
export function resolveSettings(
  flags: SettingsFlags,
  env: NodeJS.ProcessEnv,
  file: ConfigFile,
  configPath: string,
): Settings {
  const pick = <T>(
    candidates: Array<[T | undefined, Source, string]>,
    fallback: Resolved<T | undefined>,
  ): Resolved<T | undefined> => {
    for (const [value, source, origin] of candidates) {
      if (value !== undefined && value !== '') return { value, source, origin };
    }
    return fallback;
  };

  const envName = pick(
    [
      [flags.env, 'flag', '--env'],
      [env.PETINV_ENV, 'environment variable', 'PETINV_ENV'],
      [file.currentEnv, 'config file', configPath],
    ],
    { value: DEFAULT_ENVIRONMENT, source: 'default', origin: 'default' },
  ) as Resolved<string>;
  const stored = file.environments[envName.value];
  const builtinUrl = DEFAULT_BASE_URLS[envName.value];

  return {
    env: envName,
    baseUrl: pick(
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
    ),
    apiKey: pick(
      [
        [env.PETINV_API_KEY, 'environment variable', 'PETINV_API_KEY'],
        [stored?.apiKey, 'config file', configPath],
      ],
      { value: undefined, source: 'default', origin: 'none' },
    ),
  };
}

/** Checks a base URL: http or https, ending in the spec's version segment /v1. Returns it without a trailing slash. */
export function checkBaseUrl(text: string, where: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw configError(
      `${where}: "${text}" is not a URL; give the service's base address, like https://petstore.example.com/v1`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw configError(`${where}: "${text}" must be an http or https URL`);
  }
  const trimmed = text.replace(/\/+$/, '');
  if (!trimmed.endsWith('/v1')) {
    throw configError(
      `${where}: "${text}" must end in the version segment /v1, like https://petstore.example.com/v1`,
    );
  }
  return trimmed;
}

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

export function isLoopback(url: URL): boolean {
  return LOOPBACK.test(url.hostname);
}

/** Shows enough of a key to tell two apart, never enough to use it. */
export function maskKey(key: string): string {
  return key.length <= 8
    ? '*'.repeat(key.length)
    : `${key.slice(0, 4)}…${key.slice(-2)} (${key.length} characters)`;
}
