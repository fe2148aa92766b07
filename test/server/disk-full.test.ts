import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, statfsSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { version } from '../../package.json';
import { runMain } from '../helpers/main';
import {
  patchQuantity,
  runPetinv,
  type SpawnedServer,
  spawnServer,
  temporaryDirectory,
} from '../helpers/serve';
import { mountTmpfs } from '../helpers/tmpfs';

/**
 * The real thing, where the machine allows it (root, tmpfs): a small file system that enforces its size
 * exactly, nearly filled, then bursts of updates cut short by kill -9. After every restart each pet must
 * hold its last acknowledged quantity, or the one update that was in flight when the server died.
 */

const KEY = 'disk-full-key';
const PETS = 2000;

const mountPoint = mountTmpfs('size=1m');
const readOnlyMount = mountTmpfs('size=64k,ro');
const smallMount = mountTmpfs('size=64k,mode=0700');

afterAll(() => {
  for (const mounted of [mountPoint, readOnlyMount, smallMount])
    if (mounted) execFileSync('umount', ['-l', mounted], { stdio: 'ignore' });
});

describe.skipIf(!readOnlyMount)('petinv serve on a read-only mount (root only)', () => {
  it('stops at start with one line and exit code 3', async () => {
    const data = join(readOnlyMount ?? '', 'missing', 'inventory.json');
    const result = await runMain(['serve', '--port', '0', '--api-key', KEY, '--data', data], {
      env: { PETINV_CONFIG_DIR: temporaryDirectory() },
    });
    expect(result.code).toBe(3);
    expect(result.stderr).toBe(
      `petinv: cannot create the directory of data file ${data}: the file system is read-only\n`,
    );
  });
});

describe.skipIf(!smallMount)('petinv with a full cache directory (root only)', () => {
  it('keeps no compiled code it could not write whole, leaves nothing behind, and works', async () => {
    const result = await runPetinv(['--version'], { env: { PETINV_CACHE_DIR: smallMount } });
    expect(result).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: '' });
    expect(readdirSync(smallMount ?? '')).toEqual([]);
  });
});

interface PetHistory {
  acknowledged: number | undefined;
  /** Sent, not answered: the server may or may not have made it durable before it died. */
  inFlight: number | undefined;
}

const history = new Map<number, PetHistory>();
let nextQuantity = 1;

/** Leaves `bytes` free on the file system by sizing a filler file. */
function leaveFree(directory: string, bytes: number): void {
  const filler = join(directory, 'filler');
  writeFileSync(filler, '', { flag: 'a' });
  truncateSync(filler, 0);
  const { bavail, bsize } = statfsSync(directory);
  const size = Math.max(0, bavail * bsize - bytes);
  try {
    writeFileSync(filler, Buffer.alloc(size));
  } catch {
    // Filled to the last byte: as good.
  }
}

/** Updates pets, one request per pet at a time, 8 at once, until `stop()` says so. */
async function burst(server: SpawnedServer, stop: (sent: number) => boolean): Promise<Map<number, number>> {
  const statuses = new Map<number, number>();
  let sent = 0;
  const worker = async (lane: number) => {
    for (let round = 0; !stop(sent); round++) {
      const petId = ((round * 8 + lane) % PETS) + 1;
      const quantity = nextQuantity++;
      const pet = history.get(petId) ?? { acknowledged: undefined, inFlight: undefined };
      history.set(petId, pet);
      pet.inFlight = quantity;
      sent++;
      const status = await patchQuantity(server.baseUrl, KEY, petId, quantity);
      if (status === undefined) return; // The server is gone: this update stays in flight.
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (status === 200) pet.acknowledged = quantity;
      pet.inFlight = undefined;
    }
  };
  await Promise.all(Array.from({ length: 8 }, (_, lane) => worker(lane)));
  return statuses;
}

async function expectEveryAcknowledgedUpdate(server: SpawnedServer): Promise<void> {
  const response = await fetch(`${server.baseUrl}/inventory`, {
    headers: { Authorization: `Bearer ${KEY}` },
  });
  const items = (await response.json()) as { petId: number; quantity: number }[];
  const quantities = new Map(items.map((item) => [item.petId, item.quantity]));
  // A pet's value before its first update counts too: one whose first update was in flight at a kill
  // rightly keeps it.
  for (const [petId, found] of quantities)
    if (!history.has(petId)) history.set(petId, { acknowledged: found, inFlight: undefined });
  const wrong: string[] = [];
  for (const [petId, pet] of history) {
    const allowed = [pet.acknowledged, pet.inFlight].filter((value) => value !== undefined);
    if (allowed.length === 0) continue;
    const found = quantities.get(petId);
    if (found === undefined || !allowed.includes(found))
      wrong.push(`pet ${petId}: ${found}, expected one of ${allowed.join(', ')}`);
    // What the restarted server shows is now the truth to build on.
    pet.acknowledged = found;
    pet.inFlight = undefined;
  }
  expect(wrong).toEqual([]);
}

describe.skipIf(!mountPoint)('petinv serve on a real, nearly full disk (tmpfs, root only)', () => {
  it('keeps every acknowledged update through ENOSPC and kill -9, and refuses the rest with 507', async () => {
    const directory = join(mountPoint ?? '', 'data');
    mkdirSync(directory);
    const data = join(directory, 'inventory.json');
    const args = ['--data', data, '--api-key', KEY, '--seed', String(PETS), '--quiet'];
    let server = await spawnServer(args);
    await expectEveryAcknowledgedUpdate(server);
    const seen = new Map<number, number>();

    // Free space (tmpfs counts it in 4 KiB pages) against a journal line of about 27 bytes: room to spare,
    // full halfway to the kill, room to spare, full early. The kill lands at a different point each round:
    // after so many sends, wherever the server is then.
    const rounds = [
      { free: 20_000, killAfter: 130 },
      { free: 8_000, killAfter: 300 },
      { free: 40_000, killAfter: 350 },
      { free: 4_000, killAfter: 250 },
    ];
    for (const { free, killAfter } of rounds) {
      leaveFree(mountPoint ?? '', free);
      const killing = burst(server, (sent) => sent >= killAfter);
      const statuses = await killing;
      for (const [status, count] of statuses) seen.set(status, (seen.get(status) ?? 0) + count);
      server.child.kill('SIGKILL');
      await server.exited;
      leaveFree(mountPoint ?? '', 200_000); // Room for the restart's lock and a snapshot.
      server = await spawnServer(args);
      await expectEveryAcknowledgedUpdate(server);
    }
    // The disk really was full at times, and nothing but 200 and 507 was answered.
    expect(seen.get(507) ?? 0).toBeGreaterThan(0);
    expect(seen.get(200) ?? 0).toBeGreaterThan(0);
    expect([...seen.keys()].sort()).toEqual([200, 507]);
    expect(readdirSync(directory).filter((name) => name.endsWith('.tmp'))).toEqual([]);

    // A clean stop on a full disk: exit 3, and the journal carries what the snapshot could not. The
    // snapshot (about 100 KB) needs more than the journal's zeros give back.
    await burst(server, (sent) => sent >= 100);
    leaveFree(mountPoint ?? '', 0);
    const stopped = await server.stop('SIGTERM');
    expect(stopped.code).toBe(3);
    expect(server.stderr()).toMatch(/no space left[^\n]*intact/);
    leaveFree(mountPoint ?? '', 200_000);
    server = await spawnServer(args);
    await expectEveryAcknowledgedUpdate(server);
    expect((await server.stop()).code).toBe(0);
  }, 60_000);

  it('reports a final write that fails after a second signal, rather than only the cut', async () => {
    const directory = join(mountPoint ?? '', 'twice');
    mkdirSync(directory);
    const data = join(directory, 'inventory.json');
    // An inventory larger than the zeros the journal gives back for its snapshot.
    const server = await spawnServer([
      '--data',
      data,
      '--api-key',
      KEY,
      '--seed',
      String(PETS),
      '--latency',
      '1000',
      '--quiet',
    ]);
    await burst(server, (sent) => sent >= 8);
    leaveFree(mountPoint ?? '', 0);
    // A request held by --latency keeps the stop draining while the second signal arrives.
    const pending = fetch(`${server.baseUrl}/inventory`, {
      headers: { Authorization: `Bearer ${KEY}` },
    }).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 200));
    server.child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const stopped = await server.stop('SIGINT');
    await pending;
    expect(stopped.code).toBe(3);
    expect(server.stderr()).toMatch(/no space left[^\n]*intact/);
    leaveFree(mountPoint ?? '', 200_000);
  }, 30_000);
});
