import { afterAll, beforeAll, beforeEach } from 'vitest';
import { type RunningServer, type ServeOptions, startInventoryServer } from '../../src/server/start';
import { temporaryDirectory } from './serve';

export interface ServedInventory {
  server: RunningServer;
  /** Points the CLI at the server, as `local`, with its key and a config directory of its own. */
  env: NodeJS.ProcessEnv;
  /** `METHOD /path` of each request the server answered since the test began, from its own log. */
  requests: string[];
}

/**
 * A real inventory server on port 0 for the tests of one file, started before them and stopped after.
 * Read `server` and `env` inside the tests: they are set once the server listens.
 */
export function useInventoryServer(key: string, options: Partial<ServeOptions> = {}): ServedInventory {
  const served = { requests: [] as string[] } as ServedInventory;
  beforeAll(async () => {
    served.server = await startInventoryServer({
      port: 0,
      apiKeys: [key],
      seed: 12,
      log: (entry) => {
        if ('method' in entry) served.requests.push(`${entry.method} ${entry.path}`);
      },
      ...options,
    });
    served.env = {
      PETINV_CONFIG_DIR: temporaryDirectory(),
      PETINV_ENV: 'local',
      PETINV_BASE_URL: served.server.baseUrl,
      PETINV_API_KEY: key,
    };
  });
  beforeEach(() => {
    served.requests.length = 0;
  });
  afterAll(() => served.server.close());
  return served;
}
