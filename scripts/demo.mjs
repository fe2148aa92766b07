// npm run demo: a fresh clone to a working petinv in one command. Starts `petinv serve` on a free port
// with a generated key and the sample inventory, runs `petinv list` and `petinv set` against it, stops it.
// Everything lives in a temporary directory: your own petinv configuration is not touched.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import {
  PETINV_BIN as petinv,
  removeTemporaryDirectories,
  spawnReadyServer,
  temporaryDirectory,
} from './serve-process.mjs';

const home = temporaryDirectory('petinv-demo-');
// Removed however the demo ends, a serve that fails to start included.
process.once('exit', removeTemporaryDirectories);
// Key, data and kept lists in a temporary home, so the demo leaves your own configuration and cache alone.
const env = {
  ...process.env,
  PETINV_CONFIG_DIR: join(home, 'config'),
  PETINV_CACHE_DIR: join(home, 'cache'),
};

const { child: server, ready } = await spawnReadyServer(
  [petinv, 'serve', '--port', '0', '--data', join(home, 'inventory.json'), '--json', '--quiet'],
  { env, stdout: 'inherit' },
);
console.log(
  `petinv serve is listening on ${ready.baseUrl} with ${ready.pets} sample pets and a generated key.\n`,
);

// serve stored its key for local, and a stored key goes only to the address stored with it: local's
// built-in one is port 4010, so point local at the port serve picked.
spawnSync(process.execPath, [petinv, 'env', 'set-url', 'local', ready.baseUrl], { env, stdio: 'ignore' });
const clientEnv = {
  ...env,
  PETINV_ENV: 'local',
  FORCE_COLOR: process.stdout.isTTY ? '1' : '0',
};
let failed = false;
for (const args of [
  ['list', '--table'],
  ['set', '3', '42'],
  ['adjust', '3', '+5'],
  ['list', '--status', 'sold', '--table'],
]) {
  console.log(`$ petinv ${args.join(' ')}`);
  const result = spawnSync(process.execPath, [petinv, ...args], { env: clientEnv, stdio: 'inherit' });
  failed ||= result.status !== 0;
  console.log('');
}

server.kill('SIGTERM');
await new Promise((resolve) => server.on('exit', resolve));
console.log(failed ? 'demo: a command failed (see above)' : 'demo: done; petinv serve stopped.');
process.exitCode = failed ? 1 : 0;
