import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readdirSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { patchQuantity, type SpawnedServer, spawnServer, temporaryDirectory } from '../helpers/serve';

/**
 * A failing device, where the machine allows it (root, loop devices, e2fsprogs, and xfs_io or python3 for
 * FS_IOC_SHUTDOWN): an ext4 file system with 4 KiB blocks on a loop device over a sparse image, the image
 * in a small tmpfs. Filling the tmpfs makes the device's writes fail; then kill -9, a file-system shutdown
 * that writes nothing more, and a copy of the image: a power cut while the device failed. The copy is
 * checked (e2fsck), mounted, and serve started on it at once: it must start the first time, and every
 * update it acknowledged must be there. The loop device is capped at 4 KiB requests: on this kernel a loop
 * device over a full tmpfs completes a multi-page request that was only half written as a success, and
 * the test would blame serve for the device's lie.
 *
 * PETINV_DEVICE_ROUNDS sets the number of rounds (default 1: a few seconds); the image carries over from
 * round to round.
 */

const KEY = 'failing-device-key';
const PETS = 200;
const ROUNDS = Number(process.env.PETINV_DEVICE_ROUNDS ?? 1);
/** FS_IOC_SHUTDOWN, _IOR('X', 125, __u32), with FS_SHUTDOWN_FLAGS_NOLOGFLUSH: nothing more reaches the disk. */
const SHUTDOWN_SCRIPT =
  'import fcntl, os, struct, sys\nfd = os.open(sys.argv[1], os.O_RDONLY)\nfcntl.ioctl(fd, 0x8004587D, struct.pack("I", 2))\n';

function has(command: string, args: string[] = ['--version']): boolean {
  return spawnSync(command, args, { stdio: 'ignore' }).error === undefined;
}

/** How this machine shuts a file system down, or undefined. */
function shutdownCommand(): ((mountPoint: string) => void) | undefined {
  if (has('xfs_io', ['-V']))
    return (mountPoint) => execFileSync('xfs_io', ['-x', '-c', 'shutdown', mountPoint], { stdio: 'ignore' });
  if (has('python3'))
    return (mountPoint) => execFileSync('python3', ['-c', SHUTDOWN_SCRIPT, mountPoint], { stdio: 'ignore' });
  return undefined;
}

const run = (command: string, args: string[]) =>
  execFileSync(command, args, { stdio: 'pipe' }).toString().trim();

/** Whether this machine can run the test; says why not on stderr. */
function deviceSupport(): ((mountPoint: string) => void) | undefined {
  if (process.getuid?.() !== 0) return undefined;
  if (!['losetup', 'mkfs.ext4', 'e2fsck', 'mount', 'umount'].every((tool) => has(tool, ['-V'])))
    return undefined;
  const shutdown = shutdownCommand();
  if (!shutdown) return undefined;
  // A loop device that can be attached and capped here (a container may have none).
  const probe = join(temporaryDirectory('petinv-probe-'), 'probe.img');
  try {
    execFileSync('truncate', ['-s', '1M', probe]);
    const device = run('losetup', ['-f', '--show', probe]);
    try {
      execFileSync('sh', ['-c', `echo 4 > /sys/block/${device.replace('/dev/', '')}/queue/max_sectors_kb`]);
    } finally {
      execFileSync('losetup', ['-d', device]);
    }
  } catch {
    return undefined;
  }
  return shutdown;
}

const shutdown = deviceSupport();
const cleanups: (() => void)[] = [];

afterAll(() => {
  for (const cleanup of cleanups.reverse()) {
    try {
      cleanup();
    } catch {
      // Best effort: a mount or device already gone.
    }
  }
});

interface PetHistory {
  acknowledged: number | undefined;
  inFlight: number | undefined;
  /**
   * Refused since the last acknowledged one. A refused commit whose cut-back the failing device also
   * refused is still in the journal, and a crash may bring it back (docs/serve-durability.md): never
   * ahead of an acknowledged one, as nothing is written after it until the cut succeeds.
   */
  refused: number[];
}

/** Attaches `image` to a loop device capped at 4 KiB requests and mounts it at `mountPoint`. */
function attach(image: string, mountPoint: string): () => void {
  const device = run('losetup', ['-f', '--show', image]);
  let attached = true;
  // Once only: a loop device detached here may be another process's a moment later.
  const release = () => {
    if (!attached) return;
    attached = false;
    execFileSync('losetup', ['-d', device], { stdio: 'ignore' });
  };
  try {
    execFileSync('sh', ['-c', `echo 4 > /sys/block/${device.replace('/dev/', '')}/queue/max_sectors_kb`]);
    execFileSync('mount', ['-t', 'ext4', device, mountPoint], { stdio: 'pipe' });
  } catch (error) {
    release();
    throw error;
  }
  let mounted = true;
  const detach = (lazy = false) => {
    if (mounted) execFileSync('umount', lazy ? ['-l', mountPoint] : [mountPoint], { stdio: 'ignore' });
    mounted = false;
    release();
  };
  cleanups.push(() => detach(true));
  return () => detach();
}

/** Fills the file system holding `directory` but for about `leave` bytes. */
function fill(directory: string, leave: number): void {
  const { bavail, bsize } = statfsSync(directory);
  const fd = openSync(join(directory, 'filler'), 'a');
  if (leave > 0) {
    try {
      writeSync(fd, Buffer.alloc(Math.max(0, bavail * bsize - leave), 1));
    } catch {
      // Full already.
    }
    closeSync(fd);
    return;
  }
  try {
    for (const size of [1 << 20, 1 << 16, 1 << 12, 1 << 9]) {
      const chunk = Buffer.alloc(size, 1);
      try {
        for (;;) writeSync(fd, chunk);
      } catch {
        // Full at this size: smaller pieces next.
      }
    }
  } finally {
    closeSync(fd);
  }
}

describe.skipIf(!shutdown)('petinv serve on a failing device (root, loop device, ext4, tmpfs)', () => {
  it(
    'keeps every acknowledged update through a device that fails, kill -9 and a power cut, and starts the first time',
    async () => {
      const work = temporaryDirectory('petinv-device-');
      const backing = join(work, 'backing');
      const mountPoint = join(work, 'mounted');
      const copyPoint = join(work, 'copy');
      for (const directory of [backing, mountPoint, copyPoint]) mkdirSync(directory);
      // 12 MiB of tmpfs under a 64 MiB sparse image: the image outgrows it once serve and the filler write.
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=12m', 'tmpfs', backing]);
      cleanups.push(() => execFileSync('umount', ['-l', backing], { stdio: 'ignore' }));
      const image = join(backing, 'disk.img');
      const saved = join(work, 'saved.img');
      execFileSync('truncate', ['-s', '64M', image]);
      execFileSync(
        'mkfs.ext4',
        ['-q', '-F', '-b', '4096', '-E', 'lazy_itable_init=1,lazy_journal_init=1', image],
        { stdio: 'pipe' },
      );

      const history = new Map<number, PetHistory>();
      let nextQuantity = 1;
      const statuses = new Map<number, number>();
      let refusedReturned = 0;

      /** Updates pets, 8 at a time, until `stop()` says so or the server is gone. */
      const burst = async (server: SpawnedServer, stop: (sent: number) => boolean) => {
        let sent = 0;
        const lane = async (offset: number) => {
          for (let round = 0; !stop(sent); round++) {
            const petId = ((round * 8 + offset) % PETS) + 1;
            const quantity = nextQuantity++;
            const pet = history.get(petId) ?? { acknowledged: undefined, inFlight: undefined, refused: [] };
            history.set(petId, pet);
            pet.inFlight = quantity;
            sent++;
            const status = await patchQuantity(server.baseUrl, KEY, petId, quantity);
            if (status === undefined) return; // The server is gone: this update stays in flight.
            statuses.set(status, (statuses.get(status) ?? 0) + 1);
            if (status === 200) {
              pet.acknowledged = quantity;
              pet.refused = [];
            } else pet.refused.push(quantity);
            pet.inFlight = undefined;
          }
        };
        await Promise.all(Array.from({ length: 8 }, (_, offset) => lane(offset)));
      };

      const expectEveryAcknowledgedUpdate = async (server: SpawnedServer, saved: string) => {
        const response = await request(`${server.baseUrl}/inventory`, {
          headers: { Authorization: `Bearer ${KEY}` },
        });
        const items = (await response.body.json()) as { petId: number; quantity: number }[];
        const quantities = new Map(items.map((item) => [item.petId, item.quantity]));
        const wrong: string[] = [];
        for (const [petId, found] of quantities)
          if (!history.has(petId))
            history.set(petId, { acknowledged: found, inFlight: undefined, refused: [] });
        for (const [petId, pet] of history) {
          const allowed = [pet.acknowledged, pet.inFlight, ...pet.refused].filter(
            (value) => value !== undefined,
          );
          if (allowed.length === 0) continue;
          const found = quantities.get(petId);
          if (found === undefined || !allowed.includes(found))
            wrong.push(`pet ${petId}: ${found}, expected one of ${allowed.join(', ')}`);
          if (found !== pet.acknowledged && found !== pet.inFlight) refusedReturned++;
          pet.acknowledged = found;
          pet.inFlight = undefined;
          pet.refused = [];
        }
        // For a person to look into: the image as the cut left it, and what the start said.
        if (wrong.length > 0 && process.env.PETINV_DEVICE_KEEP) {
          execFileSync('cp', [
            '--sparse=always',
            saved,
            join(process.env.PETINV_DEVICE_KEEP, `cut-${Date.now()}.img`),
          ]);
          console.log(`failing-device: kept the image; serve said: ${server.stderr()}`);
        }
        expect(wrong).toEqual([]);
      };

      const args = (directory: string) => [
        '--data',
        join(directory, 'inventory.json'),
        '--api-key',
        KEY,
        '--seed',
        String(PETS),
        '--quiet',
      ];

      for (let round = 0; round < ROUNDS; round++) {
        const detach = attach(image, mountPoint);
        const server = await spawnServer(args(mountPoint));
        // Killed even when an expectation fails, or its open files would hold the device.
        cleanups.push(() => server.child.kill('SIGKILL'));
        // What is durable before the first update: a pet whose first update is in flight at the kill may
        // rightly still hold it.
        if (round === 0) await expectEveryAcknowledgedUpdate(server, saved);
        await burst(server, (sent) => sent >= 200);
        // The device fails once the room left is used: every write that needs a new page of the image.
        fill(backing, [256 * 1024, 0, 1024 * 1024, 64 * 1024][round % 4] ?? 0);
        const killAfter = 300 + ((round * 137) % 700);
        await burst(server, (sent) => sent >= killAfter);
        server.child.kill('SIGKILL');
        await server.exited;
        // The power cut: nothing more reaches the device, and the image is what it holds.
        shutdown?.(mountPoint);
        execFileSync('cp', ['--sparse=always', image, saved]);
        detach();
        rmSync(join(backing, 'filler'));
        const fsck = spawnSync('e2fsck', ['-f', '-y', saved], { stdio: 'pipe' });
        expect(fsck.status, fsck.stdout.toString()).toBeLessThan(4);

        const detachCopy = attach(saved, copyPoint);
        // At once, and the first time: no retry. An empty or torn lock the cut left never stops it.
        const restarted = await spawnServer(args(copyPoint));
        cleanups.push(() => restarted.child.kill('SIGKILL'));
        if (process.env.PETINV_DEVICE_VERBOSE === '1')
          console.log(`failing-device: round ${round}: ${restarted.stderr()}`);
        await expectEveryAcknowledgedUpdate(restarted, saved);
        expect((await restarted.stop()).code).toBe(0);
        expect(readdirSync(copyPoint).filter((name) => name.endsWith('.tmp'))).toEqual([]);
        detachCopy();
        execFileSync('cp', ['--sparse=always', saved, image]);
      }
      if (process.env.PETINV_DEVICE_VERBOSE === '1')
        console.log(
          `failing-device: ${ROUNDS} rounds, answers ${JSON.stringify([...statuses])}, refused updates back after the cut ${refusedReturned}`,
        );
      // The device really did fail at times, and serve refused rather than lose.
      expect(statuses.get(200) ?? 0).toBeGreaterThan(0);
      expect([...statuses.keys()].filter((status) => status !== 200).length).toBeGreaterThan(0);
      expect([...statuses.keys()].every((status) => [200, 503, 507].includes(status))).toBe(true);
    },
    60_000 + ROUNDS * 30_000,
  );
});
