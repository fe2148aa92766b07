import { rmSync } from 'node:fs';
import { afterAll } from 'vitest';
import { temporaryDirectory } from './serve';

// Every command that reads the list keeps it in the user cache directory (src/client/list-cache.ts). Tests
// must never write into the real one, so each test file gets its own, inherited by the processes it spawns.
const cacheHome = temporaryDirectory('petinv-cache-home-');
process.env.XDG_CACHE_HOME = cacheHome;
afterAll(() => rmSync(cacheHome, { recursive: true, force: true }));

// Every write run is recorded in the history under the state directory (src/history/store.ts): never the
// real one either. A command run in-process is given it too (test/helpers/main.ts), unless a test sets its own.
const stateHome = temporaryDirectory('petinv-state-home-');
process.env.XDG_STATE_HOME = stateHome;
afterAll(() => rmSync(stateHome, { recursive: true, force: true }));
