// The petinv client, whole processes, each against a baseline measured in the same run.

import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { KEY, median, petinvBin, printTable, startPetinv, temporaryDirectory } from './lib.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 11);

/** Wall time of one whole process, stdout thrown away, in ms. */
async function timeProcess(args, env) {
  return (await measureProcess(args, env)).ms;
}

/**
 * Wall time (ms) and peak resident memory (MiB) of one whole process, its stdout read from a pipe and
 * thrown away. The peak is the child's own, from the kernel (getrusage's ru_maxrss via /usr/bin/time
 * would need a binary; Node reports it at exit through a preload that prints it on fd 3).
 */
function measureProcess(args, env) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, ['--import', PEAK_PRELOAD, ...args], {
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    });
    child.stdout.resume();
    let stderr = '';
    let peak = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.stdio[3].on('data', (chunk) => (peak += chunk));
    child.on('close', (code) =>
      code === 0
        ? resolve({ ms: performance.now() - started, peakMiB: Number(peak) / 1024 })
        : reject(new Error(`${args.join(' ')}: exit ${code}\n${stderr}`)),
    );
  });
}

/** Preloaded into each measured process: at exit, its peak RSS in KiB on fd 3. */
const PEAK_PRELOAD = `data:text/javascript,${encodeURIComponent(
  "import { writeSync } from 'node:fs'; process.on('exit', () => { try { writeSync(3, String(process.resourceUsage().maxRSS)); } catch {} });",
)}`;

/**
 * The least a node client can do for the list into a pipe: one node:http GET, JSON.parse, TSV lines.
 * JSON.parse rounds petIds above 2^53, which the bench's ids never reach; petinv must not.
 */
const minimalListClient = (url, key) =>
  `require('node:http').get(${JSON.stringify(url)}, { headers: { authorization: 'Bearer ${key}' } }, (res) => { let body = ''; res.setEncoding('utf8'); res.on('data', (chunk) => (body += chunk)); res.on('end', () => { const items = JSON.parse(body); let out = ''; for (const item of items) out += item.petId + '\\t' + item.status + '\\t' + item.quantity + '\\n'; process.stdout.write(out); }); });`;

/** The list of a million pets into a pipe, in each streamed format, against the minimal client. */
export async function benchList() {
  const rows = [['measure', 'petinv', 'baseline', 'ratio', 'target']];
  const server = await startPetinv(['--seed', '1000000', '--in-memory']);
  const listEnv = {
    PETINV_CONFIG_DIR: temporaryDirectory(),
    PETINV_ENV: 'local',
    PETINV_BASE_URL: server.baseUrl,
    PETINV_API_KEY: KEY,
  };
  const baseline = ['-e', minimalListClient(`${server.baseUrl}/inventory`, KEY)];
  const runs = Number(process.env.BENCH_LIST_RUNS ?? 3);
  for (const [name, args] of [
    ['TSV', []],
    ['--ndjson', ['--ndjson']],
    ['--csv', ['--csv']],
    ['--json', ['--json']],
  ]) {
    // A and B in turn, after a warm-up of each (the server's first GET serializes the list).
    await measureProcess([petinvBin, 'list', ...args], listEnv);
    await measureProcess(baseline, listEnv);
    const a = [];
    const b = [];
    for (let i = 0; i < runs; i++) {
      a.push(await measureProcess([petinvBin, 'list', ...args], listEnv));
      b.push(await measureProcess(baseline, listEnv));
    }
    const ratio = (key) => median(a.map((run, i) => run[key] / b[i][key]));
    rows.push([
      `1,000,000 pets: list ${name} into a pipe, time`,
      `${median(a.map((run) => run.ms)).toFixed(0)} ms`,
      `${median(b.map((run) => run.ms)).toFixed(0)} ms minimal node client`,
      ratio('ms').toFixed(2),
      '<= 1.50',
    ]);
    rows.push([
      `1,000,000 pets: list ${name} into a pipe, peak memory`,
      `${median(a.map((run) => run.peakMiB)).toFixed(0)} MiB`,
      `${median(b.map((run) => run.peakMiB)).toFixed(0)} MiB minimal node client`,
      ratio('peakMiB').toFixed(2),
      '<= 1.00',
    ]);
  }
  await server.stop();
  printTable(
    `List into a pipe (whole processes, ${runs} runs each, A and B in turn; medians, and the median of per-run ratios)`,
    rows,
  );
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

  printTable('Client (whole processes; ratios are petinv / baseline)', rows);
}
