// petinv serve against a bare node:http handler, same load generator and connections. The load comes
// from wrk (C) when it is installed: autocannon is JavaScript on the same two cores, and a generator that
// is itself the bottleneck flatters whatever it is compared with. Its CPU share is printed either way.

import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { Agent, request } from 'undici';
import {
  childCpuSeconds,
  KEY,
  median,
  printTable,
  startPetinv,
  startProcess,
  temporaryDirectory,
} from './lib.mjs';

export const CONNECTIONS = 32;
// Nine rounds of 2 s rather than five of 3: a server's rate on this shared machine moves by a third from
// one 3 s round to the next, and the median of more, shorter rounds taken in turn follows that drift.
export const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const CORES = cpus().length;
const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
export const hasWrk = spawnSync('wrk', ['--version'], { stdio: 'ignore' }).error === undefined;

// Each PATCH sets a quantity the pet does not hold, so every one is a real, durable change: serve answers
// a PATCH that repeats the current quantity without writing, and a bench that resent values would measure
// that shortcut. wrk runs one Lua state per thread, each with the same script, so `setup` gives each
// thread its own band of quantities (two threads counting alike would send each other's values again),
// and each run starts from a band no earlier run used (the `runBase` the bench passes in).
const patchScript = (pets, runBase) => `
local threads = 0
setup = function(thread)
  thread:set("band", ${runBase} + threads * 10000000)
  threads = threads + 1
end
counter = 0
request = function()
  counter = counter + 1
  local body = '{"quantity":' .. (band + counter) .. '}'
  return wrk.format("PATCH", "/v1/inventory/" .. ((counter % ${pets}) + 1), nil, body)
end
`;

/**
 * Where the next wrk run's quantities start: each run takes bands of its own (two threads' worth), so no
 * PATCH of any run repeats a quantity an earlier run left on a pet. Quantities stay under 2^31.
 */
let nextRunBase = 100_000_000;
export const takeRunBase = () => {
  const base = nextRunBase;
  nextRunBase += 20_000_000;
  if (nextRunBase > 2_000_000_000) nextRunBase = 100_000_000;
  return base;
};

/** CPU seconds a process has used so far, from the kernel's accounting. */
export function processCpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in clock ticks of 1/100 s
}

/** wrk's requests per second and CPU seconds (bash's `times` reports its child's user and system time). */
export function runWrk(url, method, { connections = CONNECTIONS, seconds = SECONDS, pets = 10 } = {}) {
  const scriptDirectory = temporaryDirectory();
  const script = join(scriptDirectory, 'patch.lua');
  writeFileSync(script, patchScript(pets, takeRunBase()));
  const wrkArgs = ['-t2', `-c${connections}`, `-d${seconds}s`, '-H', `Authorization: Bearer ${KEY}`];
  if (method === 'PATCH') wrkArgs.push('-H', 'Content-Type: application/json', '-s', script);
  const quoted = [...wrkArgs, url].map((arg) => `'${arg}'`).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', `wrk ${quoted}; times`], { stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.on('exit', () => {
      rmSync(scriptDirectory, { recursive: true, force: true });
      const rate = Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1]);
      const failures = /Non-2xx or 3xx responses: (\d+)|Socket errors: (.*)/.exec(output);
      if (failures || !Number.isFinite(rate)) return reject(new Error(`wrk ${method} ${url}:\n${output}`));
      resolve({ rate, generatorCpu: childCpuSeconds(output) });
    });
  });
}

async function runAutocannon(url, method) {
  const base = takeRunBase();
  let counter = 0;
  const before = process.cpuUsage();
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: SECONDS,
    method,
    headers,
    requests:
      method === 'PATCH'
        ? [
            {
              setupRequest: (request) => ({
                ...request,
                path: `/v1/inventory/${(counter % 10) + 1}`,
                body: `{"quantity":${base + counter++}}`,
              }),
            },
          ]
        : undefined,
  });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${method} ${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  const used = process.cpuUsage(before);
  return { rate: result.requests.average, generatorCpu: (used.user + used.system) / 1e6 };
}

/** Requests per second against `server`, with the share of the machine's CPU the generator and the server took. */
export async function load(server, url, method) {
  const serverBefore = processCpuSeconds(server.child.pid);
  const { rate, generatorCpu } = await (hasWrk ? runWrk(url, method) : runAutocannon(url, method));
  const serverCpu = processCpuSeconds(server.child.pid) - serverBefore;
  const capacity = SECONDS * CORES;
  const shares = { generatorShare: generatorCpu / capacity, serverShare: serverCpu / capacity };
  assertNotBottleneck(
    `${method} ${new URL(url).pathname} on ${server.label}`,
    shares.generatorShare,
    shares.serverShare,
  );
  return { rate, ...shares };
}

/** Every measurement whose load generator was the bottleneck; `npm run bench` fails when any is here. */
export const bottlenecks = [];

/**
 * A load generator that takes as much CPU as the server it loads, or nearly all of the cores it runs on
 * (wrk -t2: two), is what limits the rate: the figure then measures the generator, not the server, and a
 * ratio against it says nothing. Such a run is recorded and fails the bench at its end.
 */
export function assertNotBottleneck(what, generatorShare, serverShare) {
  const generatorThreads = hasWrk ? 2 : 1;
  const saturated = generatorShare >= 0.9 * Math.min(1, generatorThreads / CORES);
  if (saturated || generatorShare >= serverShare)
    bottlenecks.push(
      `${what}: the load generator used ${percent(generatorShare)} of the machine's CPU, the server ${percent(serverShare)}`,
    );
}

const percent = (share) => `${Math.round(share * 100)}%`;

export async function benchServer() {
  const bare = await startProcess([join(import.meta.dirname, 'bare-server.mjs')], 'the bare handler');
  const bareDurable = await startProcess(
    [join(import.meta.dirname, 'bare-server.mjs'), join(temporaryDirectory(), 'journal')],
    'the bare handler made durable',
  );
  const petinv = await startPetinv(['--seed', '10', '--data', join(temporaryDirectory(), 'inventory.json')]);
  const samples = { bareGet: [], petinvGet: [], barePatch: [], petinvPatch: [], bareDurablePatch: [] };
  // Each pair in turn, the first of it alternating from round to round: whichever went first in every round
  // had the machine in another state (a rate that climbed round after round, or a load that came and went).
  const inTurn = async (round, ...runs) => {
    for (const [list, run] of round % 2 === 0 ? runs : runs.toReversed()) list.push(await run());
  };
  // One untimed round first: V8 has optimized neither server's handlers yet, and a 2 s round would count it.
  for (const server of [bare, petinv, bareDurable])
    for (const [path, method] of [
      ['/inventory', 'GET'],
      ['/inventory/1', 'PATCH'],
    ])
      await (hasWrk ? runWrk : runAutocannon)(`${server.baseUrl}${path}`, method);
  for (let round = 0; round < ROUNDS; round++) {
    await inTurn(
      round,
      [samples.bareGet, () => load(bare, `${bare.baseUrl}/inventory`, 'GET')],
      [samples.petinvGet, () => load(petinv, `${petinv.baseUrl}/inventory`, 'GET')],
    );
    await inTurn(
      round,
      [samples.barePatch, () => load(bare, `${bare.baseUrl}/inventory/1`, 'PATCH')],
      [samples.petinvPatch, () => load(petinv, `${petinv.baseUrl}/inventory/1`, 'PATCH')],
      [samples.bareDurablePatch, () => load(bareDurable, `${bareDurable.baseUrl}/inventory/1`, 'PATCH')],
    );
  }
  await Promise.all([bare.stop(), bareDurable.stop(), petinv.stop()]);
  const rate = (runs) => Math.round(median(runs.map((run) => run.rate)));
  const ratio = (a, b) => median(a.map((run, i) => run.rate / b[i].rate)).toFixed(2);
  const shares = (a, b) =>
    `${percent(median(a.map((run) => run.generatorShare)))} / ${percent(median(b.map((run) => run.generatorShare)))}`;
  const serverShares = (a, b) =>
    `${percent(median(a.map((run) => run.serverShare)))} / ${percent(median(b.map((run) => run.serverShare)))}`;
  const rows = [
    [
      'measure',
      'petinv req/s',
      'bare node:http req/s',
      'ratio',
      'target',
      'generator CPU (petinv / bare)',
      'server CPU',
    ],
    [
      'GET /v1/inventory, 10 pets',
      rate(samples.petinvGet),
      rate(samples.bareGet),
      ratio(samples.petinvGet, samples.bareGet),
      '>= 1.00',
      shares(samples.petinvGet, samples.bareGet),
      serverShares(samples.petinvGet, samples.bareGet),
    ],
    [
      'PATCH, durable vs in-memory',
      rate(samples.petinvPatch),
      rate(samples.barePatch),
      ratio(samples.petinvPatch, samples.barePatch),
      '',
      shares(samples.petinvPatch, samples.barePatch),
      serverShares(samples.petinvPatch, samples.barePatch),
    ],
    [
      'PATCH, durable vs bare made durable',
      rate(samples.petinvPatch),
      rate(samples.bareDurablePatch),
      ratio(samples.petinvPatch, samples.bareDurablePatch),
      '>= 0.90',
      shares(samples.petinvPatch, samples.bareDurablePatch),
      serverShares(samples.petinvPatch, samples.bareDurablePatch),
    ],
  ];
  printTable(
    `Server throughput (${hasWrk ? 'wrk' : 'autocannon'}, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS}s, median of per-round ratios; CPU as a share of all ${CORES} cores)`,
    rows,
  );
  console.log(
    `The bare handler made durable the way petinv is (bench/bare-server.mjs): ${ratio(samples.bareDurablePatch, samples.barePatch)} of its in-memory rate.`,
  );
}

async function timed(work) {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

/** `count` PATCHes spread over the inventory, `concurrency` at a time, over undici's request API. */
async function burst(baseUrl, count, concurrency, pets) {
  const dispatcher = new Agent({ connections: concurrency });
  const base = takeRunBase();
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const response = await request(`${baseUrl}/inventory/${((i * 7919) % pets) + 1}`, {
        method: 'PATCH',
        headers,
        body: `{"quantity":${base + i}}`,
        dispatcher,
      });
      await response.body.text();
      if (response.statusCode !== 200) throw new Error(`PATCH answered ${response.statusCode}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  await dispatcher.close();
}

export async function benchLargeInventory() {
  const rows = [
    [
      'pets',
      'start-up ms',
      'first GET ms',
      'GET, nothing changed ms',
      'GET after 1 PATCH ms',
      '10,000 PATCHes ms',
      'peak MiB',
    ],
  ];
  for (const pets of [100_000, 1_000_000]) {
    const server = await startPetinv([
      '--seed',
      String(pets),
      '--data',
      join(temporaryDirectory(), 'inventory.json'),
    ]);
    const get = () =>
      fetch(`${server.baseUrl}/inventory`, { headers }).then((response) => response.arrayBuffer());
    const first = await timed(get);
    const again = await timed(get);
    await burst(server.baseUrl, 1, 1, pets);
    const afterPatch = await timed(get);
    const patches = await timed(() => burst(server.baseUrl, 10_000, CONNECTIONS, pets));
    rows.push([
      pets,
      server.startMs.toFixed(0),
      first.toFixed(0),
      again.toFixed(0),
      afterPatch.toFixed(0),
      patches.toFixed(0),
      server.peakMiB().toFixed(0),
    ]);
    await server.stop();
  }
  printTable(
    'Large inventories (linear growth: the 1,000,000 row should be about 10x the 100,000 row or less)',
    rows,
  );
}

/**
 * Crash replay: a serve killed (SIGKILL) with a full journal, 16,383 updates of one pet each (the most a
 * small inventory's journal holds before a snapshot folds it), started again, against the same serve
 * started over an empty journal. Each update is a real PATCH, one at a time, so the journal is the one
 * serve writes.
 */
export async function benchCrashReplay() {
  const updates = 16_383;
  const dataFile = join(temporaryDirectory(), 'inventory.json');
  const args = ['--seed', '10', '--data', dataFile];
  const first = await startPetinv(args);
  await first.stop();
  const empty = [];
  for (let run = 0; run < 3; run++) {
    const again = await startPetinv(args);
    empty.push(again.startMs);
    await again.stop();
  }
  const writer = await startPetinv(args);
  await burst(writer.baseUrl, updates, 1, 10);
  await new Promise((resolve) => {
    writer.child.on('exit', resolve);
    writer.child.kill('SIGKILL');
  });
  const replayed = [];
  for (let run = 0; run < 3; run++) {
    // --in-memory reads the journal as a start after the crash does, and leaves it for the next run.
    const again = await startPetinv([...args, '--in-memory']);
    replayed.push(again.startMs);
    await again.stop();
  }
  printTable(`Crash replay (whole serve processes, until ready; median of 3)`, [
    ['start', 'ms'],
    ['over an empty journal', median(empty).toFixed(0)],
    [`after SIGKILL, ${updates.toLocaleString('en')} updates to replay`, median(replayed).toFixed(0)],
  ]);
}
