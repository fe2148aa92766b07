// `npm run bench -- ceiling`: how near to the in-memory PATCH rate a durable PATCH can come on this
// machine at all, whatever petinv does. The bare handler (bench/bare-server.mjs) in memory, then made
// durable four ways: petinv's design (one journal, appended, one write at a time), several journals
// written at once, and both over room laid down in advance. Each is loaded in turn, round by round, by
// the same load generator as the server bench; each ratio is the median of its per-round ratios.
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
    samples.inMemory.push(await load(inMemory, `${inMemory.baseUrl}/inventory/1`, 'PATCH'));
    for (const [index, server] of durable.entries())
      samples.durable[index].push(await load(server, `${server.baseUrl}/inventory/1`, 'PATCH'));
  }
  await Promise.all([inMemory, ...durable].map((server) => server.stop()));
  const rows = [['bare handler, durable PATCH', 'req/s', 'in-memory req/s', 'ratio', 'server CPU']];
  for (const [index, variant] of VARIANTS.entries()) {
    const runs = samples.durable[index];
    rows.push([
      variant.label,
      Math.round(median(runs.map((run) => run.rate))),
      Math.round(median(samples.inMemory.map((run) => run.rate))),
      median(runs.map((run, round) => run.rate / samples.inMemory[round].rate)).toFixed(2),
      `${Math.round(median(runs.map((run) => run.serverShare)) * 100)}%`,
    ]);
  }
  printTable(
    `The durable PATCH ceiling (${hasWrk ? 'wrk' : 'autocannon'}, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS}s; ratio to the bare in-memory PATCH)`,
    rows,
  );
}
