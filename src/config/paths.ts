import { join } from 'node:path';
import envPaths from 'env-paths';

/** Where petinv keeps its files; every process input comes in through `env` so tests can move it. */

const systemPaths = () => envPaths('petinv', { suffix: '' });

export function configDirectory(env: NodeJS.ProcessEnv): string {
  return env.PETINV_CONFIG_DIR || systemPaths().config;
}

export function configFilePath(env: NodeJS.ProcessEnv): string {
  return join(configDirectory(env), 'config.json');
}

/** Where the last list of each environment is kept for conditional requests (src/api/list-cache.ts). */
export function cacheDirectory(env: NodeJS.ProcessEnv): string {
  return env.PETINV_CACHE_DIR || systemPaths().cache;
}

/** `petinv serve` keeps its inventory here unless --data names another file. */
export function defaultDataFile(env: NodeJS.ProcessEnv): string {
  return join(env.PETINV_DATA_DIR || systemPaths().data, 'inventory.json');
}

/** The address `petinv serve` listens on by default, which the `local` environment points at. */
export {
  DEFAULT_BASE_URL as LOCAL_BASE_URL,
  DEFAULT_SERVE_HOST as LOCAL_SERVE_HOST,
  DEFAULT_SERVE_PORT as LOCAL_SERVE_PORT,
} from '../server/defaults';
