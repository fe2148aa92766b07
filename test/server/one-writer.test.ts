import { execFileSync } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, readFileSync, statfsSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { serializeItems } from '../../src/contract/json';
import { lockDataFile } from '../../src/server/data-claim';
import { InventoryFile } from '../../src/server/data-file';
import { seedInventory } from '../../src/server/store';
import { FaultyFiles } from '../helpers/faulty-files';
import { bearer, jsonBody, request } from '../helpers/http';
import { runMain } from '../helpers/main';
import { type SpawnedServer, spawnServer, temporaryDirectory } from '../helpers/serve';
import { mountTmpfs } from '../helpers/tmpfs';

/**
 * One writer per data file, however it is reached: each serve here is a process of its own, as an
 * operator would start it, and the second start is the real CLI.
 */

const KEY = 'one-writer-key';
const servers: SpawnedServer[] = [];
afterEach(async () => {
  await Promise.allSettled(servers.splice(0).map((server) => server.stop('SIGKILL')));
});

async function serve(data: string): Promise<SpawnedServer> {
  const server = await spawnServer(['--data', data, '--api-key', KEY, '--quiet']);
  servers.push(server);
  return server;
}

const secondStart = (data: string) =>
  runMain(['serve', '--port', '0', '--data', data, '--api-key', KEY], {
    env: { PETINV_CONFIG_DIR: temporaryDirectory() },
  });

const quantityOfPet3 = async (server: SpawnedServer) =>
  (
    (await request(`${server.baseUrl}/inventory`, { headers: bearer(KEY) })).json() as Array<{
      petId: number;
      quantity: number;
    }>
  ).find((item) => item.petId === 3)?.quantity;

/**
 * Runs `check` with the file `source` bind-mounted on a file of its own at a new path (what it gets), and
 * unmounts it after; skips the test where mount is refused (no mounts in this container: nothing to show).
 */
async function withFileBindMount(
  source: string,
  context: { skip: () => void },
  check: (target: string) => Promise<void>,
  prepare: (target: string) => void = () => {},
): Promise<void> {
  const target = join(temporaryDirectory(), 'mounted.json');
  writeFileSync(target, '');
  prepare(target);
  try {
    execFileSync('mount', ['--bind', source, target], { stdio: 'ignore' });
  } catch {
    return context.skip();
  }
  try {
    await check(target);
  } finally {
    execFileSync('umount', ['-l', target], { stdio: 'ignore' });
  }
}

/** A hard link made now to the data file this process holds is refused: the lock claims its identity. */
async function expectNewLinkRefused(data: string): Promise<void> {
  const link = join(temporaryDirectory(), 'after-snapshot.json');
  linkSync(data, link);
  await expect(lockDataFile(link)).rejects.toThrow(
    `is in use by another petinv serve (pid ${process.pid}), which reaches the same file as ${data}`,
  );
}

describe('a second serve on the same data file by another name', () => {
  it.each([
    ['a hard link in another directory', () => join(temporaryDirectory(), 'elsewhere.json')],
    ['a hard link in the same directory', (data: string) => join(data, '..', 'same-dir-link.json')],
  ])('is refused through %s, naming the serve that holds it', async (_name, place) => {
    const data = join(temporaryDirectory(), 'inventory.json');
    const first = await serve(data);
    const link = place(data);
    linkSync(data, link);
    const second = await secondStart(link);
    expect(second.code).toBe(3);
    expect(second.stderr).toContain(
      `is in use by another petinv serve (pid ${first.child.pid}), which reaches the same file as ${data}; stop it or choose another file with --data`,
    );
    // The first serve is undisturbed, and its data file was not touched by the refused start.
    const patched = await request(`${first.baseUrl}/inventory/3`, jsonBody(KEY, '{"quantity":77}'));
    expect(patched.status).toBe(200);
    expect(existsSync(`${link}.journal`)).toBe(false);
  });

  it('after kill -9, a start through another name is refused: its journal holds what the snapshot lacks', async () => {
    const data = join(temporaryDirectory(), 'inventory.json');
    const first = await serve(data);
    expect((await request(`${first.baseUrl}/inventory/3`, jsonBody(KEY, '{"quantity":777}'))).status).toBe(
      200,
    );
    const link = join(temporaryDirectory(), 'hard.json');
    linkSync(data, link);
    await first.stop('SIGKILL');
    const second = await secondStart(link);
    expect(second.code).toBe(3);
    expect(second.stderr).toContain(
      `data file ${link} has 1 other name (hard links) and no journal beside this one`,
    );
    expect(existsSync(`${link}.journal`)).toBe(false);
    // Through the name it was served by, the update is there.
    const again = await serve(data);
    expect(await quantityOfPet3(again)).toBe(777);
  });

  it('follows the data file to each new snapshot, so a hard link to the new file is refused too', async () => {
    const data = join(temporaryDirectory(), 'inventory.json');
    const lock = await lockDataFile(data);
    let followed: Promise<void> | undefined;
    const { file } = await InventoryFile.open(data, () => seedInventory(3), {
      onSnapshotReplaced: () => {
        followed = lock.follow();
      },
    });
    try {
      await lock.follow();
      const before = statSync(data).ino;
      await file.writeSnapshot(Buffer.from(serializeItems(seedInventory(4))));
      expect(statSync(data).ino).not.toBe(before);
      await followed;
      await expectNewLinkRefused(data);
    } finally {
      await file.close();
      await lock.release();
    }
  });

  it('follows a snapshot renamed into place whose directory sync then failed: the data file is the new one', async () => {
    const data = join(temporaryDirectory(), 'inventory.json');
    const files = new FaultyFiles();
    const lock = await lockDataFile(data, files);
    let followed: Promise<void> | undefined;
    const { file } = await InventoryFile.open(data, () => seedInventory(3), {
      files,
      onSnapshotReplaced: () => {
        followed = lock.follow();
      },
    });
    try {
      await lock.follow();
      const before = statSync(data).ino;
      files.failSync = (path) => (path === dirname(data) ? 'EIO' : undefined);
      await expect(file.writeSnapshot(Buffer.from(serializeItems(seedInventory(4))))).rejects.toThrow(
        'cannot make a new snapshot',
      );
      files.failSync = undefined;
      // Renamed all the same: the name now reaches the new file, which must be claimed as the old one was.
      expect(statSync(data).ino).not.toBe(before);
      await followed;
      await expectNewLinkRefused(data);
    } finally {
      await file.close();
      await lock.release();
    }
  });

  it.skipIf(process.getuid?.() !== 0)(
    'is refused through a bind mount of the file (root only)',
    async (context) => {
      const data = join(temporaryDirectory(), 'inventory.json');
      const first = await serve(data);
      await withFileBindMount(data, context, async (target) => {
        const second = await secondStart(target);
        expect(second.code).toBe(3);
        expect(second.stderr).toContain(`(pid ${first.child.pid})`);
      });
    },
  );
});

describe('a data file bind-mounted on its own', () => {
  it.skipIf(process.getuid?.() !== 0)(
    'is refused, as no snapshot could replace it and its journal would lie beside the mount (root only)',
    async (context) => {
      const data = join(temporaryDirectory(), 'inventory.json');
      writeFileSync(data, '[{"petId":1,"quantity":3,"status":"sold"}]');
      await withFileBindMount(data, context, async (target) => {
        const started = await secondStart(target);
        expect(started.code).toBe(3);
        expect(started.stderr).toContain(`data file ${target} is a mount point of its own`);
        expect(existsSync(`${target}.journal`)).toBe(false);
        expect(existsSync(`${target}.lock`)).toBe(false);
      });
    },
  );
});

describe('a data file bind-mounted on its own, with a journal beside the mount', () => {
  it.skipIf(process.getuid?.() !== 0)(
    'is refused naming that journal, which holds updates the file lacks (root only)',
    async (context) => {
      const data = join(temporaryDirectory(), 'inventory.json');
      writeFileSync(data, '[{"petId":1,"quantity":3,"status":"sold"}]');
      // Left by an earlier petinv that served through this mount: every update since is only here.
      const journal = 'petinv-journal 2\n1 00000000 [{"petId":1,"quantity":9}]\n';
      await withFileBindMount(
        data,
        context,
        async (target) => {
          const started = await secondStart(target);
          expect(started.code).toBe(3);
          expect(started.stderr).toContain(`data file ${target} is a mount point of its own`);
          expect(started.stderr).toContain(`${target}.journal beside the mount holds updates`);
          expect(readFileSync(`${target}.journal`, 'utf8')).toBe(journal);
        },
        (target) => writeFileSync(`${target}.journal`, journal),
      );
    },
  );
});

describe('a data file no directory holds any more', () => {
  it.skipIf(process.getuid?.() !== 0)(
    'is refused through a single-file bind mount that still shows a file since replaced (root only)',
    async (context) => {
      const data = join(temporaryDirectory(), 'inventory.json');
      const first = await serve(data);
      await withFileBindMount(data, context, async (target) => {
        await request(`${first.baseUrl}/inventory/3`, jsonBody(KEY, '{"quantity":41}'));
        // A clean stop writes a new snapshot, renamed over the data file: the mount still shows the old one.
        expect((await first.stop()).code).toBe(0);
        expect(statSync(target).nlink).toBe(0);
        const second = await secondStart(target);
        expect(second.code).toBe(3);
        expect(second.stderr).toContain(`data file ${target} is in no directory any more`);
        expect(existsSync(`${target}.journal`)).toBe(false);
      });
    },
  );
});

describe('a restart after a crash', () => {
  it.each([
    ['empty', ''],
    ['all zeros', '\0'.repeat(64)],
    ['cut short', '4'],
  ])('is never refused for a lock file a power cut left %s', async (_name, left) => {
    const data = join(temporaryDirectory(), 'inventory.json');
    const first = await serve(data);
    await request(`${first.baseUrl}/inventory/3`, jsonBody(KEY, '{"quantity":31}'));
    await first.stop('SIGKILL');
    writeFileSync(`${data}.lock`, left);
    const restarted = await serve(data);
    expect(await quantityOfPet3(restarted)).toBe(31);
    expect(readFileSync(`${data}.lock`, 'utf8').split('\n')[0]).toBe(String(restarted.child.pid));
  });
});

const fullDisk = mountTmpfs('size=256k');
afterAll(() => {
  if (fullDisk) execFileSync('umount', ['-l', fullDisk], { stdio: 'ignore' });
});

describe.skipIf(!fullDisk)('a restart on a full disk after kill -9 (root only)', () => {
  it('starts at once, serves every acknowledged update, and says its lock record could not be written', async () => {
    const directory = join(fullDisk ?? '', 'data');
    mkdirSync(directory);
    const data = join(directory, 'inventory.json');
    const first = await serve(data);
    expect((await request(`${first.baseUrl}/inventory/3`, jsonBody(KEY, '{"quantity":42}'))).status).toBe(
      200,
    );
    await first.stop('SIGKILL');
    // Another writer fills the disk to the last byte.
    const filler = join(fullDisk ?? '', 'filler');
    try {
      writeFileSync(filler, Buffer.alloc(statfsSync(directory).bavail * statfsSync(directory).bsize));
    } catch {
      // Full: as wanted.
    }
    for (let bytes = 4096; bytes >= 1; bytes = Math.floor(bytes / 2))
      try {
        writeFileSync(join(fullDisk ?? '', `more-${bytes}`), Buffer.alloc(bytes));
      } catch {
        // As full as it gets at this size.
      }
    expect(statfsSync(directory).bavail).toBe(0);

    const restarted = await spawnServer(['--data', data, '--api-key', KEY]);
    servers.push(restarted);
    expect(await quantityOfPet3(restarted)).toBe(42);
    expect(restarted.stderr()).toMatch(/lock record .*inventory\.json\.lock could not be written/);
    // The lock file the killed serve left (naming its dead pid) is gone rather than naming a stranger.
    expect(existsSync(`${data}.lock`)).toBe(false);
    // A second serve is still refused: the kernel's claims hold the file.
    expect((await secondStart(data)).code).toBe(3);
  });
});
