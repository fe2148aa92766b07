// `npm run bench -- ceiling`: how near to the in-memory PATCH rate a durable PATCH can come on this
// machine at all, whatever petinv does. The bare handler (bench/bare-server.mjs) in memory, then made
// durable four ways: petinv's design (one journal, appended, one write at a time), several journals
// written at once, and both over room laid down in advance. Each is loaded in turn, round by round, by
// the same load generator as the server bench; each ratio is the median of its per-round ratios.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { median, printTable, startProcess, temporaryDirectory } from './lib.mjs';
import { CONNECTIONS, hasWrk, load, ROUNDS, SECONDS } from './server.mjs';

const bareServer = join(import.meta.dirname, 'bare-server.mjs');

const VARIANTS = [
  { label: 'one journal, appended (petinv)', args: [] },
  { label: 'four journals at once, appended', args: ['--journals', '4'] },
  { label: 'one journal, over room laid down', args: ['--over-room'] },
  { label: 'four journals at once, over room laid down', args: ['--journals', '4', '--over-room'] },
];

/** CPU time the whole machine has spent busy so far, in seconds (all cores, kernel threads included). */
function machineBusySeconds() {
  const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  // idle and iowait (the fourth and fifth) are time not spent.
  const [user, nice, system, , , irq, softirq, steal] = ticks;
  return (user + nice + system + irq + softirq + steal) / 100;
}

/** A load run, with the machine's CPU per request: the server's, the generator's and the kernel's together. */
async function measured(server, path) {
  const busyBefore = machineBusySeconds();
  const run = await load(server, `${server.baseUrl}${path}`, 'PATCH');
  const busy = machineBusySeconds() - busyBefore;
  return { ...run, cpuPerRequest: busy / (run.rate * SECONDS) };
}

export async function benchDurableCeiling() {
  const inMemory = await startProcess([bareServer], 'the bare handler');
  const durable = [];
  for (const variant of VARIANTS)
    durable.push(
      await startProcess(
        [bareServer, join(temporaryDirectory(), 'journal'), ...variant.args],
        `the bare handler, ${variant.label}`,
      ),
    );
  const samples = { inMemory: [], durable: durable.map(() => []) };
  for (let round = 0; round < ROUNDS; round++) {
    samples.inMemory.push(await measured(inMemory, '/inventory/1'));
    for (const [index, server] of durable.entries())
      samples.durable[index].push(await measured(server, '/inventory/1'));
  }
  await Promise.all([inMemory, ...durable].map((server) => server.stop()));
  const microseconds = (runs) => `${(median(runs.map((run) => run.cpuPerRequest)) * 1e6).toFixed(1)} µs`;
  const rows = [
    ['bare handler, PATCH', 'req/s', 'ratio to in memory', 'server CPU', 'machine CPU per request'],
    [
      'in memory',
      Math.round(median(samples.inMemory.map((run) => run.rate))),
      '1.00',
      `${Math.round(median(samples.inMemory.map((run) => run.serverShare)) * 100)}%`,
      microseconds(samples.inMemory),
    ],
  ];
  for (const [index, variant] of VARIANTS.entries()) {
    const runs = samples.durable[index];
    rows.push([
      variant.label,
      Math.round(median(runs.map((run) => run.rate))),
      median(runs.map((run, round) => run.rate / samples.inMemory[round].rate)).toFixed(2),
      `${Math.round(median(runs.map((run) => run.serverShare)) * 100)}%`,
      microseconds(runs),
    ]);
  }
  printTable(
    `The durable PATCH ceiling (${hasWrk ? 'wrk' : 'autocannon'}, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS}s, medians; machine CPU: every core's busy time, kernel included, per request answered)`,
    rows,
  );
}
