// The petinv client, whole processes, each against a baseline measured in the same run.

import { spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { KEY, median, petinvBin, printTable, startPetinv, temporaryDirectory } from './lib.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 11);

/** Wall time of one whole process, stdout thrown away, in ms. */
function timeProcess(args, env) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, ...env },
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('exit', (code) =>
      code === 0
        ? resolve(performance.now() - started)
        : reject(new Error(`${args.join(' ')}: exit ${code}\n${stderr}`)),
    );
  });
}

/** Runs A and B in turn, A B A B ..., after a warm-up of each; returns the medians and the median ratio A/B. */
async function pairs(a, b, runs = RUNS) {
  await a();
  await b();
  const times = { a: [], b: [] };
  for (let i = 0; i < runs; i++) {
    times.a.push(await a());
    times.b.push(await b());
  }
  return {
    a: median(times.a),
    b: median(times.b),
    ratio: median(times.a.map((value, i) => value / times.b[i])),
  };
}

/**
 * A repeated `petinv list` of 1,000,000 pets with nothing changed (a 304 and the cached body) against the
 * first list (an empty cache: the whole body over the wire, then kept). First and repeated in turn, each
 * repeated list right after the first list that filled its cache; the ratio is the median of the pairs'.
 */
export async function benchRepeatedList(rows) {
  const runs = Number(process.env.BENCH_LIST_RUNS ?? 3);
  const server = await startPetinv(['--seed', '1000000', '--in-memory']);
  const cacheDir = temporaryDirectory();
  const configDir = temporaryDirectory();
  const env = {
    PETINV_CONFIG_DIR: configDir,
    PETINV_CACHE_DIR: cacheDir,
    PETINV_ENV: 'local',
    PETINV_BASE_URL: server.baseUrl,
    PETINV_API_KEY: KEY,
  };
  const result = await pairs(
    () => {
      rmSync(cacheDir, { recursive: true, force: true });
      return timeProcess([petinvBin, 'list'], env);
    },
    () => timeProcess([petinvBin, 'list'], env),
    runs,
  );
  rows.push([
    `1,000,000 pets: list again, nothing changed (median of ${runs})`,
    `${result.b.toFixed(0)} ms`,
    `${result.a.toFixed(0)} ms first list`,
    (1 / result.ratio).toFixed(2),
    '<= 0.20',
  ]);
  await server.stop();
  for (const directory of [cacheDir, configDir]) rmSync(directory, { recursive: true, force: true });
}

export async function benchClient() {
  const rows = [['measure', 'petinv', 'baseline', 'ratio', 'target']];
  const fmt = (ms) => `${ms.toFixed(0)} ms`;

  // Cold start: `petinv list` against a plain node:http script making the same request.
  const small = await startPetinv(['--seed', '12', '--in-memory']);
  const env = {
    PETINV_CONFIG_DIR: temporaryDirectory(),
    PETINV_ENV: 'local',
    PETINV_BASE_URL: small.baseUrl,
    PETINV_API_KEY: KEY,
  };
  const plainScript = `require('node:http').get(${JSON.stringify(`${small.baseUrl}/inventory`)}, { headers: { authorization: 'Bearer ${KEY}' } }, (res) => { let body = ''; res.setEncoding('utf8'); res.on('data', (chunk) => (body += chunk)); res.on('end', () => process.stdout.write(body)); });`;
  const cold = await pairs(
    () => timeProcess([petinvBin, 'list'], env),
    () => timeProcess(['-e', plainScript], env),
  );
  rows.push([
    `cold start: petinv list (median of ${RUNS})`,
    fmt(cold.a),
    `${fmt(cold.b)} node:http script`,
    cold.ratio.toFixed(2),
    '<= 2.50',
  ]);
  await small.stop();

  // 100,000 pets as a table against the same rows as tab-separated text.
  const large = await startPetinv(['--seed', '100000', '--in-memory']);
  const largeEnv = { ...env, PETINV_BASE_URL: large.baseUrl };
  const table = await pairs(
    () => timeProcess([petinvBin, 'list', '--table'], largeEnv),
    () => timeProcess([petinvBin, 'list'], largeEnv),
    5,
  );
  rows.push([
    '100,000 pets: list --table',
    fmt(table.a),
    `${fmt(table.b)} list (TSV)`,
    table.ratio.toFixed(2),
    '<= 2.00',
  ]);
  await large.stop();

  // Bulk set of 10,000 lines against the server's raw PATCH throughput at the same concurrency.
  const bulkServer = await startPetinv([
    '--seed',
    '10000',
    '--data',
    join(temporaryDirectory(), 'inventory.json'),
  ]);
  const bulkEnv = { ...env, PETINV_BASE_URL: bulkServer.baseUrl };
  const file = join(temporaryDirectory(), 'bulk.txt');
  writeFileSync(file, Array.from({ length: 10_000 }, (_, i) => `${i + 1} ${(i * 7) % 100}\n`).join(''));
  const bulkMs = median([
    await timeProcess([petinvBin, 'set', '--file', file, '--concurrency', '8'], bulkEnv),
    await timeProcess([petinvBin, 'set', '--file', file, '--concurrency', '8'], bulkEnv),
    await timeProcess([petinvBin, 'set', '--file', file, '--concurrency', '8'], bulkEnv),
  ]);
  let counter = 0;
  const rawStarted = performance.now();
  await autocannon({
    url: `${bulkServer.baseUrl}/inventory/1`,
    connections: 8,
    amount: 10_000,
    method: 'PATCH',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    requests: [
      {
        setupRequest: (request) => ({
          ...request,
          path: `/v1/inventory/${(counter % 10000) + 1}`,
          body: `{"quantity":${counter++ % 100}}`,
        }),
      },
    ],
  });
  const rawRate = 10_000 / ((performance.now() - rawStarted) / 1000);
  const bulkRate = 10_000 / (bulkMs / 1000);
  rows.push([
    'bulk set, 10,000 lines, concurrency 8',
    `${bulkRate.toFixed(0)} updates/s`,
    `${rawRate.toFixed(0)} req/s raw PATCH`,
    (bulkRate / rawRate).toFixed(2),
    '>= 0.50',
  ]);
  await bulkServer.stop();

  await benchRepeatedList(rows);

  printTable('Client (whole processes; ratios are petinv / baseline)', rows);
}
