// npm run bench: every figure is a ratio against a baseline measured in the same run.
// `npm run bench -- server` or `-- client` runs one half; `-- list` only the million-pet list; `-- cold`
// only the cold start; `-- bulk` only the bulk run; `-- replay` only the crash replay; `-- ceiling` (not part of the whole bench) what
// a durable PATCH can reach here whatever petinv does.
//
// The figures are Node 24's, the active LTS a user installs today: run on an older Node, the bench fetches
// Node 24 as CI does (scripts/fetch-node.sh) and runs itself again on it. NODE_EXTRA_CA_CERTS is unset for
// the bench and so for every process it times: Node 20 parsed that file at every start (about 45 ms), and a
// user's shell has no such variable.
import { spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { printTable } from './lib.mjs';

const BENCH_NODE = 24;
const caCertificates = process.env.NODE_EXTRA_CA_CERTS;
delete process.env.NODE_EXTRA_CA_CERTS;

if (Number(process.versions.node.split('.')[0]) < BENCH_NODE) {
  const fetched = spawnSync(
    'bash',
    [join(import.meta.dirname, '../scripts/fetch-node.sh'), String(BENCH_NODE)],
    {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  if (fetched.status !== 0) {
    console.error(`bench: cannot fetch Node ${BENCH_NODE}, and the figures are Node ${BENCH_NODE}'s`);
    process.exit(1);
  }
  const node = join(fetched.stdout.trim(), 'node');
  console.log(`bench: running on Node ${BENCH_NODE} (${node}) rather than this ${process.version}`);
  if (caCertificates) console.log(`bench: NODE_EXTRA_CA_CERTS (${caCertificates}) unset for it`);
  const again = spawnSync(node, process.argv.slice(1), { stdio: 'inherit' });
  process.exit(again.status ?? 1);
}

const { benchDurableCeiling } = await import('./ceiling.mjs');
const { benchBulk, benchClient, benchColdStart, benchList } = await import('./client.mjs');
const { benchCrashReplay, benchLargeInventory, benchServer, bottlenecks, hasWrk } = await import(
  './server.mjs'
);

console.log(
  [
    `Node ${process.version} on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC,`,
    `load average ${loadavg()[0].toFixed(1)} at the start (other work on the machine slows the figures;`,
    'ratios, each taken side by side in this run, hold better).',
    `NODE_EXTRA_CA_CERTS is unset for every timed process${caCertificates ? ` (this shell sets it to ${caCertificates})` : ''}.`,
    hasWrk
      ? 'Load from wrk.'
      : 'wrk is not installed (Debian package wrk): load from autocannon, JavaScript on the same cores.',
  ].join('\n'),
);

const only = process.argv[2];
if (!only || only === 'server') {
  await benchServer();
  await benchLargeInventory();
  await benchCrashReplay();
}
if (only === 'cold') await benchColdStart();
if (only === 'bulk') {
  const { KEY, temporaryDirectory } = await import('./lib.mjs');
  const env = {
    PETINV_CONFIG_DIR: temporaryDirectory(),
    PETINV_CACHE_DIR: temporaryDirectory(),
    PETINV_ENV: 'local',
    PETINV_API_KEY: KEY,
  };
  const row = await benchBulk(env);
  printTable('Bulk run (ratio: petinv / wrk)', [['measure', 'petinv', 'baseline', 'ratio', 'target'], row]);
}
if (!only || only === 'client') await benchClient();
if (!only || only === 'client' || only === 'list') await benchList();
if (only === 'ceiling') await benchDurableCeiling();
if (only === 'replay') await benchCrashReplay();

if (bottlenecks.length > 0) {
  console.error(`\nThe load generator was the bottleneck, so these figures measure it rather than petinv:`);
  for (const line of bottlenecks) console.error(`  ${line}`);
  process.exitCode = 1;
}
