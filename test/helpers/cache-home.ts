import { rmSync } from 'node:fs';
import { afterAll } from 'vitest';
import { temporaryDirectory } from './serve';

// Every command that reads the list keeps it in the user cache directory (src/client/list-cache.ts). Tests
// must never write into the real one, so each test file gets its own, inherited by the processes it spawns.
const cacheHome = temporaryDirectory('petinv-cache-home-');
process.env.XDG_CACHE_HOME = cacheHome;
afterAll(() => rmSync(cacheHome, { recursive: true, force: true }));
