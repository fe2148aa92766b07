// petinv serve against a bare node:http handler, same load generator (autocannon) and connections.

import { join } from 'node:path';
import autocannon from 'autocannon';
import { Agent, request } from 'undici';
import { KEY, median, printTable, startPetinv, startProcess, temporaryDirectory } from './lib.mjs';

const CONNECTIONS = 32;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };

async function requestsPerSecond(url, method) {
  let counter = 0;
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: SECONDS,
    method,
    headers,
    // Each PATCH sets a new quantity on one of ten pets, so every one is a real, durable change.
    requests:
      method === 'PATCH'
        ? [
            {
              setupRequest: (request) => ({
                ...request,
                path: `/v1/inventory/${(counter % 10) + 1}`,
                body: `{"quantity":${counter++ % 100000}}`,
              }),
            },
          ]
        : undefined,
  });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${method} ${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return result.requests.average;
}

export async function benchServer() {
  const bare = await startProcess([join(import.meta.dirname, 'bare-server.mjs')]);
  const petinv = await startPetinv(['--seed', '10', '--data', join(temporaryDirectory(), 'inventory.json')]);
  const samples = { bareGet: [], petinvGet: [], barePatch: [], petinvPatch: [] };
  for (let round = 0; round < ROUNDS; round++) {
    samples.bareGet.push(await requestsPerSecond(`${bare.baseUrl}/inventory`, 'GET'));
    samples.petinvGet.push(await requestsPerSecond(`${petinv.baseUrl}/inventory`, 'GET'));
    samples.barePatch.push(await requestsPerSecond(`${bare.baseUrl}/inventory/1`, 'PATCH'));
    samples.petinvPatch.push(await requestsPerSecond(`${petinv.baseUrl}/inventory/1`, 'PATCH'));
  }
  await Promise.all([bare.stop(), petinv.stop()]);
  const ratio = (a, b) => median(a.map((value, i) => value / b[i]));
  const rows = [
    ['measure', 'petinv req/s', 'bare node:http req/s', 'ratio', 'target'],
    [
      'GET /v1/inventory, 10 pets',
      Math.round(median(samples.petinvGet)),
      Math.round(median(samples.bareGet)),
      ratio(samples.petinvGet, samples.bareGet).toFixed(2),
      '>= 0.80',
    ],
    [
      'PATCH, durable vs in-memory',
      Math.round(median(samples.petinvPatch)),
      Math.round(median(samples.barePatch)),
      ratio(samples.petinvPatch, samples.barePatch).toFixed(2),
      '>= 0.50',
    ],
  ];
  printTable(
    `Server throughput (${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS}s, median of per-round ratios)`,
    rows,
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
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const response = await request(`${baseUrl}/inventory/${((i * 7919) % pets) + 1}`, {
        method: 'PATCH',
        headers,
        body: `{"quantity":${i}}`,
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
