import { afterAll, beforeAll } from 'vitest';
import { type RunningServer, type ServeOptions, startInventoryServer } from '../../src/server/start';
import { temporaryDirectory } from './serve';

export interface ServedInventory {
  server: RunningServer;
  /** Points the CLI at the server, as `local`, with its key and a config directory of its own. */
  env: NodeJS.ProcessEnv;
}

/**
 * A real inventory server on port 0 for the tests of one file, started before them and stopped after.
 * Read `server` and `env` inside the tests: they are set once the server listens.
 */
export function useInventoryServer(key: string, options: Partial<ServeOptions> = {}): ServedInventory {
  const served = {} as ServedInventory;
  beforeAll(async () => {
    served.server = await startInventoryServer({ port: 0, apiKeys: [key], seed: 12, ...options });
    served.env = {
      PETINV_CONFIG_DIR: temporaryDirectory(),
      PETINV_ENV: 'local',
      PETINV_BASE_URL: served.server.baseUrl,
      PETINV_API_KEY: key,
    };
  });
  afterAll(() => served.server.close());
  return served;
}
