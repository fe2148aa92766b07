// The petinv client, whole processes, each against a baseline measured in the same run.

import { spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import {
  childCpuSeconds,
  KEY,
  median,
  petinvBin,
  printTable,
  startPetinv,
  temporaryDirectory,
} from './lib.mjs';
import { assertNotBottleneck, hasWrk, processCpuSeconds, runWrk, takeRunBase } from './server.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 15);

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
 * A baseline script, written to a file as a user's script would be, and CommonJS: on Node 22 and later an
 * ES module's `import` of node:http loads Node's internal undici and http2 as well (about 30 ms), which
 * would flatter petinv. It GETs `url` with node:http and hands the body to `onBody`, a function's source.
 */
function baselineScript(name, url, onBody) {
  const file = join(temporaryDirectory(), `${name}.cjs`);
  writeFileSync(
    file,
    `require('node:http').get(${JSON.stringify(url)}, { headers: { authorization: 'Bearer ${KEY}' } }, (res) => {
  let body = '';
  res.setEncoding('utf8');
  res.on('data', (chunk) => (body += chunk));
  res.on('end', () => (${onBody})(body));
});
`,
  );
  return file;
}

/**
 * The least a node client can do for the list into a pipe: one node:http GET, JSON.parse, TSV lines.
 * JSON.parse rounds petIds above 2^53, which the bench's ids never reach; petinv must not.
 */
const minimalListClient = (url) =>
  baselineScript(
    'minimal-list-client',
    url,
    `(body) => { let out = ''; for (const item of JSON.parse(body)) out += item.petId + '\\t' + item.status + '\\t' + item.quantity + '\\n'; process.stdout.write(out); }`,
  );

/** The list of a million pets into a pipe, in each streamed format, against the minimal client. */
export async function benchList() {
  const rows = [['measure', 'petinv', 'baseline', 'ratio', 'target']];
  const server = await startPetinv(['--seed', '1000000', '--in-memory']);
  const listEnv = {
    PETINV_CONFIG_DIR: temporaryDirectory(),
    // The whole list over the wire each time, as the baseline gets it: the kept list is benchRepeatedList's.
    PETINV_CACHE_DIR: temporaryDirectory(),
    PETINV_ENV: 'local',
    PETINV_BASE_URL: server.baseUrl,
    PETINV_API_KEY: KEY,
  };
  const baseline = [minimalListClient(`${server.baseUrl}/inventory`)];
  const runs = Number(process.env.BENCH_LIST_RUNS ?? 3);
  for (const [name, args] of [
    ['TSV', ['--no-cache']],
    ['--ndjson', ['--ndjson', '--no-cache']],
    ['--csv', ['--csv', '--no-cache']],
    ['--json', ['--json', '--no-cache']],
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
      '<= 1.00',
    ]);
    rows.push([
      `1,000,000 pets: list ${name} into a pipe, peak memory`,
      `${median(a.map((run) => run.peakMiB)).toFixed(0)} MiB`,
      `${median(b.map((run) => run.peakMiB)).toFixed(0)} MiB minimal node client`,
      ratio('peakMiB').toFixed(2),
      '<= 0.50',
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

const fmt = (ms) => `${ms.toFixed(0)} ms`;

/**
 * Cold start: `petinv list` of 12 pets against a CommonJS node:http script making the same request, A and
 * B in turn. petinv's code kept by the launcher from the first run (src/launch.ts), as for a user's every
 * run after their first; the list cache in a directory of its own, as the baseline keeps none either way.
 */
export async function benchColdStart() {
  const small = await startPetinv(['--seed', '12', '--in-memory']);
  const env = {
    PETINV_CONFIG_DIR: temporaryDirectory(),
    PETINV_CACHE_DIR: temporaryDirectory(),
    PETINV_ENV: 'local',
    PETINV_BASE_URL: small.baseUrl,
    PETINV_API_KEY: KEY,
  };
  const plainScript = baselineScript(
    'plain',
    `${small.baseUrl}/inventory`,
    '(body) => process.stdout.write(body)',
  );
  // Wall time is the measure; CPU time (user+sys, every thread) beside it says how much of a slow run was
  // the shared machine's load rather than petinv.
  const coldRuns = { a: [], b: [] };
  const timed = (runs, args) => async () => {
    const run = await timeProcessCpu(args, env);
    runs.push(run);
    return run.ms;
  };
  const cold = await pairs(timed(coldRuns.a, [petinvBin, 'list']), timed(coldRuns.b, [plainScript]));
  await small.stop();
  // pairs() runs one warm-up of each first; the CPU figures skip it too.
  const cpu = (runs) => runs.slice(1).map((run) => run.cpu * 1000);
  const cpuRatio = median(cpu(coldRuns.a).map((ms, i) => ms / cpu(coldRuns.b)[i]));
  const rows = [
    [
      `cold start: petinv list (median of ${RUNS})`,
      fmt(cold.a),
      `${fmt(cold.b)} node:http script (CommonJS)`,
      cold.ratio.toFixed(2),
      '<= 1.30',
    ],
    [
      '  the same, CPU time (user+sys)',
      fmt(median(cpu(coldRuns.a))),
      `${fmt(median(cpu(coldRuns.b)))} node:http script (CommonJS)`,
      cpuRatio.toFixed(2),
      '',
    ],
  ];
  if (process.argv[2] === 'cold')
    printTable('Cold start (whole processes; ratios are petinv / baseline)', [
      ['measure', 'petinv', 'baseline', 'ratio', 'target'],
      ...rows,
    ]);
  return { rows, env };
}

export async function benchClient() {
  const { rows: coldRows, env } = await benchColdStart();
  const rows = [['measure', 'petinv', 'baseline', 'ratio', 'target'], ...coldRows];

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

  rows.push(await benchBulk(env));
  await benchRepeatedList(rows);

  printTable('Client (whole processes; ratios are petinv / baseline)', rows);
}

const BULK_LINES = 10_000;
const BULK_CONCURRENCY = 8;

/**
 * Wall time and CPU seconds of one whole process (bash's `times` gives its child's user and system time),
 * as runWrk measures wrk.
 */
function timeProcessCpu(args, env) {
  const quoted = [process.execPath, ...args].map((arg) => `'${arg.replaceAll("'", "'\\''")}'`).join(' ');
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn('bash', ['-c', `${quoted} >/dev/null || exit; times`], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    });
    let output = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('exit', (code) => {
      const ms = performance.now() - started;
      if (code !== 0) return reject(new Error(`${args.join(' ')}: exit ${code}\n${stderr}`));
      resolve({ ms, cpu: childCpuSeconds(output) });
    });
  });
}

/** The raw durable PATCH rate at the same connection count, from autocannon where wrk is missing. */
async function autocannonPatchRate(baseUrl) {
  const base = takeRunBase();
  let counter = 0;
  const before = process.cpuUsage();
  const started = performance.now();
  await autocannon({
    url: `${baseUrl}/inventory/1`,
    connections: BULK_CONCURRENCY,
    amount: BULK_LINES,
    method: 'PATCH',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    requests: [
      {
        setupRequest: (request) => ({
          ...request,
          path: `/v1/inventory/${(counter % BULK_LINES) + 1}`,
          body: `{"quantity":${base + counter++}}`,
        }),
      },
    ],
  });
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(before);
  return { rate: BULK_LINES / seconds, generatorCpu: (used.user + used.system) / 1e6, seconds };
}

/** The inventory as the service holds it now (petIds as text: the bench's ids stay far below 2^53). */
async function currentQuantities(baseUrl) {
  const response = await fetch(`${baseUrl}/inventory`, { headers: { authorization: `Bearer ${KEY}` } });
  if (!response.ok) throw new Error(`GET /inventory answered ${response.status}`);
  return new Map((await response.json()).map((item) => [String(item.petId), item.quantity]));
}

/**
 * A sheet that changes every pet: each quantity one more than the service holds now, read just before
 * the run (untimed). A sheet built once and reused would, from its second round on, mostly repeat what
 * the pets already hold, which a bulk run rightly skips: that measures a shortcut, not a stock-take.
 */
async function writeChangingSheet(file, baseUrl) {
  const current = await currentQuantities(baseUrl);
  const wanted = new Map([...current].map(([petId, quantity]) => [petId, quantity + 1]));
  writeFileSync(
    file,
    `petId,quantity\n${[...wanted].map(([petId, quantity]) => `${petId},${quantity}`).join('\n')}\n`,
  );
  return wanted;
}

/** Fails the bench when a bulk run left any pet other than the sheet said: a rate of wrong writes is no rate. */
async function checkSheetApplied(baseUrl, wanted) {
  const now = await currentQuantities(baseUrl);
  const wrong = [...wanted].filter(([petId, quantity]) => now.get(petId) !== quantity);
  if (wrong.length > 0)
    throw new Error(
      `bulk set left ${wrong.length} pets other than the sheet said (pet ${wrong[0][0]}: ${now.get(wrong[0][0])}, wanted ${wrong[0][1]})`,
    );
}

/**
 * A bulk set of 10,000 changed rows (a whole petinv process: start-up, reading the sheet, the one list read
 * its plan makes, every update) against the raw durable PATCH rate of the same server at the same
 * connection count, from wrk (C) when it is installed. The two alternate over rounds; the ratio is the
 * median of the per-round ratios. A round whose load generator was the bottleneck fails the bench.
 */
export async function benchBulk(env) {
  const directory = temporaryDirectory();
  const server = await startPetinv([
    '--seed',
    String(BULK_LINES),
    '--data',
    join(directory, 'inventory.json'),
  ]);
  const bulkEnv = { ...env, PETINV_BASE_URL: server.baseUrl };
  const file = join(directory, 'bulk.csv');
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const samples = [];
  for (let round = 0; round < rounds; round++) {
    const serverBefore = processCpuSeconds(server.child.pid);
    const raw = hasWrk
      ? await runWrk(`${server.baseUrl}/inventory/1`, 'PATCH', {
          connections: BULK_CONCURRENCY,
          seconds: 2,
          pets: BULK_LINES,
        })
      : await autocannonPatchRate(server.baseUrl);
    const rawSeconds = raw.seconds ?? 2;
    const serverShare = (processCpuSeconds(server.child.pid) - serverBefore) / (rawSeconds * cpus().length);
    const generatorShare = raw.generatorCpu / (rawSeconds * cpus().length);
    assertNotBottleneck('bulk set: the raw durable PATCH rate', generatorShare, serverShare);
    const wanted = await writeChangingSheet(file, server.baseUrl);
    // As a user runs it: --concurrency is connections, the same 8 as wrk's, each carrying the default
    // number of pipelined updates once serve has shown it keeps connections.
    const bulk = await timeProcessCpu(
      [petinvBin, 'set', '--file', file, '--concurrency', String(BULK_CONCURRENCY)],
      bulkEnv,
    );
    await checkSheetApplied(server.baseUrl, wanted);
    const bulkRate = BULK_LINES / (bulk.ms / 1000);
    samples.push({
      raw: raw.rate,
      bulk: bulkRate,
      ratio: bulkRate / raw.rate,
      generatorShare,
      clientMicros: (bulk.cpu / BULK_LINES) * 1e6,
    });
  }
  await server.stop();
  rmSync(directory, { recursive: true, force: true });
  const middle = (key) => median(samples.map((sample) => sample[key]));
  const generator = hasWrk ? 'wrk' : 'autocannon (no wrk: JavaScript on the same cores, may flatter petinv)';
  console.log(
    `\nbulk set: petinv used ${middle('clientMicros').toFixed(0)} µs of CPU per update (whole process); ${generator} used ${Math.round(middle('generatorShare') * 100)}% of the machine's CPU`,
  );
  return [
    `bulk set, ${BULK_LINES.toLocaleString('en-US')} changed rows, ${BULK_CONCURRENCY} connections (median of ${rounds})`,
    `${middle('bulk').toFixed(0)} updates/s`,
    `${middle('raw').toFixed(0)} req/s raw durable PATCH, ${hasWrk ? 'wrk' : 'autocannon'} -c${BULK_CONCURRENCY}`,
    middle('ratio').toFixed(2),
    '>= 0.90',
  ];
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
