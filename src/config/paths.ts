import { statSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import envPaths from 'env-paths';

/** Where petinv keeps its files; every process input comes in through `env` so tests can move it. */

/**
 * The per-user directories: the XDG base directories from `env`, a relative XDG_*_HOME ignored as the
 * specification says; macOS and Windows have their own places (env-paths).
 */
function systemPaths(env: NodeJS.ProcessEnv): { config: string; cache: string; data: string } {
  if (process.platform === 'darwin' || process.platform === 'win32')
    return envPaths('petinv', { suffix: '' });
  // The environment given, else the process's own, as env-paths reads it (tests give a partial one).
  const read = (variable: string) => env[variable] ?? process.env[variable];
  const given = read('HOME');
  const home = given && isAbsolute(given) ? given : homedir();
  const base = (variable: string, fallback: string) => {
    const value = read(variable);
    return join(value && isAbsolute(value) ? value : join(home, fallback), 'petinv');
  };
  return {
    config: base('XDG_CONFIG_HOME', '.config'),
    cache: base('XDG_CACHE_HOME', '.cache'),
    data: base('XDG_DATA_HOME', join('.local', 'share')),
  };
}

export function configDirectory(env: NodeJS.ProcessEnv): string {
  return env.PETINV_CONFIG_DIR || systemPaths(env).config;
}

export function configFilePath(env: NodeJS.ProcessEnv): string {
  return join(configDirectory(env), 'config.json');
}

/** Where the last list of each environment is kept for conditional requests (src/client/list-cache.ts). */
export function cacheDirectory(env: NodeJS.ProcessEnv): string {
  return env.PETINV_CACHE_DIR || systemPaths(env).cache;
}

/** `petinv serve` keeps its inventory here unless --data names another file. */
export function defaultDataFile(env: NodeJS.ProcessEnv): string {
  return join(env.PETINV_DATA_DIR || systemPaths(env).data, 'inventory.json');
}

/**
 * Where each running `petinv serve` leaves its record (serve-records.ts): inside PETINV_CONFIG_DIR, whose
 * `local` key goes with its serves; else the runtime directory if really the user's (after `su` it may
 * not be); else the state directory.
 */
export function serveRecordDirectory(env: NodeJS.ProcessEnv): string {
  if (env.PETINV_CONFIG_DIR) return join(env.PETINV_CONFIG_DIR, 'serves');
  const runtime = env.XDG_RUNTIME_DIR;
  if (
    runtime &&
    isAbsolute(runtime) &&
    statSync(runtime, { throwIfNoEntry: false })?.uid === process.getuid?.()
  )
    return join(runtime, 'petinv');
  return stateDirectory(env);
}

/** Where the history lives: `$XDG_STATE_HOME/petinv` when that is absolute, else `~/.local/state/petinv`. */
export function stateDirectory(env: NodeJS.ProcessEnv): string {
  const state =
    env.XDG_STATE_HOME && isAbsolute(env.XDG_STATE_HOME)
      ? env.XDG_STATE_HOME
      : join(env.HOME && isAbsolute(env.HOME) ? env.HOME : homedir(), '.local', 'state');
  return join(state, 'petinv');
}
