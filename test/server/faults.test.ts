import { appendFileSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StorageError } from '../../src/files/file-system';
import { InventoryFile } from '../../src/server/data-file';
import { ServeError } from '../../src/server/errors';
import { JOURNAL_HEADER } from '../../src/server/journal-format';
import { type RunningServer, startInventoryServer } from '../../src/server/start';
import { InventoryStore, seedInventory } from '../../src/server/store';
import { FaultyFiles } from '../helpers/faulty-files';
import { bearer, jsonBody, request } from '../helpers/http';
import { readJournal } from '../helpers/journal';
import { temporaryDirectory } from '../helpers/serve';

const seed = () => seedInventory(20);

async function openStore(path: string, files: FaultyFiles, now?: () => number) {
  const { file, items } = await InventoryFile.open(path, seed, { files, now, minJournalEntries: 1024 });
  return { file, store: new InventoryStore(items, file) };
}

/** What a fresh start finds in the file: the inventory with its journal replayed. */
async function reload(path: string): Promise<Map<bigint, number>> {
  const { file, items } = await InventoryFile.open(path, seed);
  await file.close();
  return new Map(items.map((item) => [item.petId, item.quantity]));
}

function leftovers(directory: string): string[] {
  return readdirSync(directory).filter((name) => name.endsWith('.tmp'));
}

/** The torn last commit the tests below leave, as a crash in the middle of its write would. */
const TORN_COMMIT = '2 0badf00d [{"petId":2,"quan';

/**
 * A data file in a directory of its own whose journal holds one sound commit (pet 1 to 11), then
 * TORN_COMMIT; and the journal's sound bytes, before the torn ones.
 */
async function journalEndingTorn(): Promise<{ directory: string; path: string; sound: Buffer }> {
  const directory = temporaryDirectory();
  const path = join(directory, 'inventory.json');
  const { file, store } = await openStore(path, new FaultyFiles());
  await store.setQuantity(1n, 11);
  await file.close();
  const sound = readFileSync(`${path}.journal`);
  appendFileSync(`${path}.journal`, TORN_COMMIT);
  return { directory, path, sound };
}

describe('the data file under faults', () => {
  it('completes short writes, in the journal and the snapshot', async () => {
    const directory = temporaryDirectory();
    const path = join(directory, 'inventory.json');
    const files = new FaultyFiles();
    files.maxWrite = 7;
    const { file, store } = await openStore(path, files);
    await Promise.all([store.setQuantity(1n, 101), store.setQuantity(2n, 102)]);
    expect(readJournal(path)).toBe('{"petId":1,"quantity":101}\n{"petId":2,"quantity":102}\n');
    await store.setQuantity(3n, 103);
    await file.close(() => store.listBody());
    expect(statSync(`${path}.journal`).size).toBe(JOURNAL_HEADER.length); // Emptied: its header alone.
    const loaded = await reload(path);
    expect([loaded.get(1n), loaded.get(2n), loaded.get(3n)]).toEqual([101, 102, 103]);
  });

  it('cuts a journal append that hit ENOSPC back to its last complete line, and refuses its updates', async () => {
    const path = join(temporaryDirectory(), 'inventory.json');
    const files = new FaultyFiles();
    const { file, store } = await openStore(path, files);
    await store.setQuantity(1n, 11);
    const before = readJournal(path);
    const etag = store.etag;
    // The next commit is written in part, then the disk is full.
    files.spaceLeft = 10;
    const refused = await Promise.allSettled([store.setQuantity(2n, 22), store.setQuantity(3n, 33)]);
    for (const outcome of refused) {
      expect(outcome.status).toBe('rejected');
      const error = (outcome as PromiseRejectedResult).reason;
      expect(error).toBeInstanceOf(StorageError);
      expect((error as StorageError).outOfSpace).toBe(true);
    }
    expect(readJournal(path)).toBe(before);
    expect(store.etag).toBe(etag);
    expect(store.get(2n)?.quantity).not.toBe(22);

    // Space freed: the next update goes through, and the refused ones are never written after all.
    files.spaceLeft = undefined;
    await store.setQuantity(4n, 44);
    await file.close();
    const loaded = await reload(path);
    expect(loaded.get(1n)).toBe(11);
    expect(loaded.get(4n)).toBe(44);
    expect(loaded.get(2n)).toBe(seedInventory(20)[1]?.quantity);
    expect(loaded.get(3n)).toBe(seedInventory(20)[2]?.quantity);
  });

  it('refuses a commit that would pass the file size limit (ulimit -f, EFBIG), and takes the next that fits', async () => {
    const path = join(temporaryDirectory(), 'inventory.json');
    const files = new FaultyFiles();
    const { file, store } = await openStore(path, files);
    await store.setQuantity(1n, 11);
    files.fileSizeLimit = statSync(`${path}.journal`).size + 10;
    await expect(store.setQuantity(2n, 22)).rejects.toBeInstanceOf(StorageError);
    expect(readJournal(path)).toBe('{"petId":1,"quantity":11}\n');
    files.fileSizeLimit = undefined;
    await store.setQuantity(3n, 33);
    await file.close();
    const loaded = await reload(path);
    expect([loaded.get(1n), loaded.get(2n), loaded.get(3n)]).toEqual([11, seed()[1]?.quantity, 33]);
  });

  it('after a cut-back whose sync failed, cuts back and syncs again before it writes or acknowledges anything', async () => {
    const path = join(temporaryDirectory(), 'inventory.json');
    const files = new FaultyFiles();
    const { file, store } = await openStore(path, files);
    await store.setQuantity(1n, 11);
    // The write fails, then the sync of its cut-back fails too: nothing may be written where it began
    // until a cut and a sync have both succeeded.
    let journalSyncs = 0;
    files.failSync = (opened) => (opened.endsWith('.journal') && journalSyncs++ < 2 ? 'EIO' : undefined);
    const release = files.failNextBackgroundWrite('EIO');
    const refused = store.setQuantity(2n, 22);
    release();
    await expect(refused).rejects.toBeInstanceOf(StorageError);
    // The retry's own sync fails (the second failure): refused, nothing written.
    files.log.length = 0;
    await expect(store.setQuantity(3n, 33)).rejects.toThrow(/cannot cut back journal/);
    expect(files.log).toEqual(['truncate inventory.json.journal', 'sync inventory.json.journal']);
    // Now the sync succeeds: cut, sync, and only then the write (O_DSYNC: its own sync) and the answer.
    files.log.length = 0;
    await store.setQuantity(4n, 44);
    expect(files.log).toEqual([
      'truncate inventory.json.journal',
      'sync inventory.json.journal',
      'write inventory.json.journal',
    ]);
    expect(readJournal(path)).toBe('{"petId":1,"quantity":11}\n{"petId":4,"quantity":44}\n');
    await file.close();
    const loaded = await reload(path);
    expect([loaded.get(1n), loaded.get(2n) === 22, loaded.get(3n) === 33, loaded.get(4n)]).toEqual([
      11,
      false,
      false,
      44,
    ]);
  });

  it('renames a snapshot into place only after its write and fsync, and syncs the directory after', async () => {
    const directory = temporaryDirectory();
    const path = join(directory, 'inventory.json');
    const files = new FaultyFiles();
    const { file, store } = await openStore(path, files);
    await store.setQuantity(5n, 55);
    const before = readFileSync(path);
    files.failSync = (opened) => (opened.endsWith('.tmp') ? 'EIO' : undefined);
    const renames = files.calls.rename;
    await expect(file.writeSnapshot(store.listBody())).rejects.toThrow(/input\/output error/);
    expect(files.calls.rename).toBe(renames);
    expect(readFileSync(path)).toEqual(before);
    expect(leftovers(directory)).toEqual([]);
    files.failSync = undefined;
    files.log.length = 0;
    await file.writeSnapshot(store.listBody());
    const steps = files.log.map((step) => step.replace(/\.inventory\.json\.[0-9a-f]{16}\.tmp/, 'TEMP'));
    const basename = directory.split('/').pop();
    expect(steps).toEqual([
      'write TEMP',
      'write TEMP',
      'write TEMP',
      'sync TEMP',
      'rename TEMP inventory.json',
      `sync ${basename}`,
      'truncate inventory.json.journal',
      'sync inventory.json.journal',
    ]);
    await file.close();
    expect((await reload(path)).get(5n)).toBe(55);
  });

  it('starts on a full disk with a torn last commit: its bytes go to the notice, as no file of them can be written', async () => {
    const { directory, path, sound } = await journalEndingTorn();
    const torn = TORN_COMMIT;
    const names = readdirSync(directory).sort();
    const files = new FaultyFiles();
    files.spaceLeft = 5;
    const reopened = await InventoryFile.open(path, seed, { files });
    // Never acknowledged, so nothing is lost; the evidence is in the report the start logs.
    expect(reopened.journal.torn).toEqual({
      bytes: torn.length,
      base64: Buffer.from(torn).toString('base64'),
    });
    expect(reopened.items.find((item) => item.petId === 1n)?.quantity).toBe(11);
    expect(readFileSync(`${path}.journal`)).toEqual(sound);
    expect(readdirSync(directory).sort()).toEqual(names);
    await reopened.file.close();
  });

  it('refuses the start when a torn last commit cannot be kept aside for another reason, and changes nothing', async () => {
    const { directory, path } = await journalEndingTorn();
    const journal = readFileSync(`${path}.journal`);
    const names = readdirSync(directory).sort();
    const files = new FaultyFiles();
    // The side file's sync fails: an input/output error, not a full disk.
    files.failSync = (synced) =>
      synced.includes('.journal.torn-') || synced.endsWith('.tmp') ? 'EIO' : undefined;
    await expect(InventoryFile.open(path, seed, { files })).rejects.toThrow(
      /ends in a commit a crash cut short \(never acknowledged\), which serve keeps in .*\.journal\.torn-\d{8}T\d{6}Z before it cuts it, and that file could not be written: .*; every file was left as it is/,
    );
    expect(readFileSync(`${path}.journal`)).toEqual(journal);
    expect(readdirSync(directory).sort()).toEqual(names);
    // With the device sound again, the start keeps it aside and goes on.
    const reopened = await InventoryFile.open(path, seed);
    expect(reopened.journal.torn?.bytes).toBe(TORN_COMMIT.length);
    await reopened.file.close();
  });

  it('refuses an append whose durable write failed (EIO), and the one waiting behind it too', async () => {
    const path = join(temporaryDirectory(), 'inventory.json');
    const files = new FaultyFiles();
    const { file, store } = await openStore(path, files);
    await store.setQuantity(1n, 11);
    const before = readJournal(path);
    files.failBackgroundWrite = 'EIO';
    let release: () => void = () => {};
    files.holdBackgroundWrites = new Promise<void>((resolve) => (release = resolve));
    // The second update arrives while the first commit is being written: it waits, is written from where
    // the failed one began once that is cut back, and is refused when its own write fails too.
    const first = Promise.allSettled([store.setQuantity(2n, 22)]);
    await new Promise((resolve) => setImmediate(resolve));
    const second = Promise.allSettled([store.setQuantity(3n, 33)]);
    await new Promise((resolve) => setImmediate(resolve));
    release();
    const outcomes = [...(await first), ...(await second)];
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected']);
    expect(((outcomes[0] as PromiseRejectedResult).reason as StorageError).outOfSpace).toBe(false);
    files.holdBackgroundWrites = undefined;
    files.failBackgroundWrite = undefined;
    expect(readJournal(path)).toBe(before);
    await file.close();
    const loaded = await reload(path);
    expect([loaded.get(1n), loaded.get(2n) === 22, loaded.get(3n) === 33]).toEqual([11, false, false]);
  });

  it('after a failed write, writes the batch that waited where the refused one began', async () => {
    const path = join(temporaryDirectory(), 'inventory.json');
    const files = new FaultyFiles();
    const { file, store } = await openStore(path, files);
    await store.setQuantity(1n, 11);
    // The next journal write fails (EIO) once it is released; every write after it succeeds.
    const release = files.failNextBackgroundWrite('EIO');
    const refused = store.setQuantity(2n, 22);
    await new Promise((resolve) => setImmediate(resolve));
    const accepted = store.setQuantity(3n, 33);
    release();
    await expect(refused).rejects.toBeInstanceOf(StorageError);
    expect(await accepted).toMatchObject({ petId: 3n, quantity: 33 });
    expect(readJournal(path)).toBe('{"petId":1,"quantity":11}\n{"petId":3,"quantity":33}\n');
    await file.close();
    const loaded = await reload(path);
    expect([loaded.get(1n), loaded.get(2n) === 22, loaded.get(3n)]).toEqual([11, false, 33]);
  });

  it('writes an append only once the one before it is durable, and answers them in order', async () => {
    const path = join(temporaryDirectory(), 'inventory.json');
    const files = new FaultyFiles();
    const { file } = await openStore(path, files);
    const line = (petId: number, quantity: number) => ({
      petId: BigInt(petId),
      quantity,
      status: 'sold' as const,
    });
    const before = readJournal(path);
    // The first write is held, then fails; every later one succeeds at once.
    const release = files.failNextBackgroundWrite('EIO');
    const answers: string[] = [];
    const answered = (name: string, change: ReturnType<typeof line>) =>
      new Promise<void>((resolve) =>
        file.append([change], (error) => {
          answers.push(`${name}:${error ? 'refused' : 'durable'}`);
          resolve();
        }),
      );
    const a = answered('a', line(1, 11));
    const b = answered('b', line(2, 22));
    // b waits for a: a later durable write could not vouch for the lines before it.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(readJournal(path)).toBe(`${before}{"petId":1,"quantity":11}\n`);
    expect(answers).toEqual([]);
    release();
    await Promise.all([a, b]);
    expect(answers).toEqual(['a:refused', 'b:durable']);
    expect(readJournal(path)).toBe(`${before}{"petId":2,"quantity":22}\n`);
    await file.close();
    const loaded = await reload(path);
    expect([loaded.get(1n) === 11, loaded.get(2n)]).toEqual([false, 22]);
  });

  it('never renames a snapshot cut short by ENOSPC over the data file, and keeps the journal', async () => {
    const directory = temporaryDirectory();
    const path = join(directory, 'inventory.json');
    const files = new FaultyFiles();
    const { file, store } = await openStore(path, files);
    await store.setQuantity(5n, 55);
    const snapshot = readFileSync(path);
    const journal = readJournal(path);
    files.spaceLeft = 100; // The snapshot needs more than that.
    await expect(file.writeSnapshot(store.listBody())).rejects.toThrow(/no space left/);
    expect(readFileSync(path)).toEqual(snapshot);
    expect(readJournal(path)).toBe(journal);
    expect(leftovers(directory)).toEqual([]);
    files.spaceLeft = undefined;
    await file.close();
    expect((await reload(path)).get(5n)).toBe(55);
  });

  it('when a failed append cannot even be cut back, cuts it back before writing anything else, or refuses that too', async () => {
    const path = join(temporaryDirectory(), 'inventory.json');
    const files = new FaultyFiles();
    const { file, store } = await openStore(path, files);
    await store.setQuantity(1n, 11);
    files.failTruncate = 'EIO';
    const release = files.failNextBackgroundWrite('EIO');
    const refused = store.setQuantity(2n, 22);
    release();
    await expect(refused).rejects.toBeInstanceOf(StorageError);
    // Still failing: the next update is refused without a byte written after the refused line.
    await expect(store.setQuantity(3n, 33)).rejects.toThrow(/cannot cut back journal/);
    expect(readJournal(path)).toBe('{"petId":1,"quantity":11}\n{"petId":2,"quantity":22}\n');
    files.failTruncate = undefined;
    await store.setQuantity(4n, 44);
    await store.close();
    expect(readJournal(path)).toBe('{"petId":1,"quantity":11}\n{"petId":4,"quantity":44}\n');
    await file.close();
    const loaded = await reload(path);
    expect([loaded.get(1n), loaded.get(2n), loaded.get(3n), loaded.get(4n)]).toEqual([11, 24, 11, 44]);
  });

  it('a clean stop while a cut-back is still owed leaves no refused line to replay', async () => {
    const path = join(temporaryDirectory(), 'inventory.json');
    const files = new FaultyFiles();
    const { file, store } = await openStore(path, files);
    files.failTruncate = 'EIO';
    const release = files.failNextBackgroundWrite('EIO');
    const refused = store.setQuantity(2n, 22);
    release();
    await expect(refused).rejects.toBeInstanceOf(StorageError);
    files.failTruncate = undefined;
    // Nothing was acknowledged since the data file was written: the journal counts no entries.
    await store.close();
    await file.close(() => store.listBody());
    expect(statSync(`${path}.journal`).size).toBe(JOURNAL_HEADER.length); // Emptied: its header alone.
    expect((await reload(path)).get(2n)).toBe(24);
  });

  it('a snapshot taken while a cut-back is still owed leaves nothing for that cut-back to pad', async () => {
    // The refused line is gone with the rest of the journal once a snapshot empties it; cutting back to
    // where it began would then have padded the empty journal with NUL bytes.
    const path = join(temporaryDirectory(), 'inventory.json');
    const files = new FaultyFiles();
    const { file, store } = await openStore(path, files);
    for (let quantity = 1; quantity <= 20; quantity++) await store.setQuantity(1n, quantity);
    files.failTruncate = 'EIO';
    const release = files.failNextBackgroundWrite('EIO');
    const refused = store.setQuantity(2n, 22);
    release();
    await expect(refused).rejects.toBeInstanceOf(StorageError);
    files.failTruncate = undefined;
    await file.writeSnapshot(store.listBody());
    await store.setQuantity(3n, 33);
    await store.close();
    expect(readJournal(path)).toBe('{"petId":3,"quantity":33}\n');
    await file.close();
    const loaded = await reload(path);
    expect([loaded.get(1n), loaded.get(2n), loaded.get(3n)]).toEqual([20, 24, 33]);
  });

  it('after a snapshot whose journal truncation could not be synced, cuts a failed append back to the right place', async () => {
    // The journal was emptied but its fsync failed (EIO). Had the journal kept its old length, a later
    // failed append would be "cut back" to that length: ftruncate would pad the file with NUL bytes, the
    // updates written after them would sit behind an invalid line, and the next start would refuse it.
    const path = join(temporaryDirectory(), 'inventory.json');
    const files = new FaultyFiles();
    const { file, store } = await openStore(path, files);
    for (let quantity = 1; quantity <= 50; quantity++) await store.setQuantity(1n, quantity);
    files.failSync = (synced) =>
      synced.endsWith('.journal') && statSync(synced).size === JOURNAL_HEADER.length ? 'EIO' : undefined;
    await file.writeSnapshot(store.listBody());
    files.failSync = undefined;
    await store.setQuantity(2n, 22);
    const release = files.failNextBackgroundWrite('EIO');
    const refused = store.setQuantity(3n, 33);
    release();
    await expect(refused).rejects.toBeInstanceOf(StorageError);
    await store.setQuantity(4n, 44);
    await store.close();
    expect(readJournal(path)).toBe('{"petId":2,"quantity":22}\n{"petId":4,"quantity":44}\n');
    await file.close();
    const loaded = await reload(path);
    expect([loaded.get(1n), loaded.get(2n), loaded.get(3n), loaded.get(4n)]).toEqual([50, 22, 11, 44]);
  });

  it('waits before trying a failed snapshot again, rather than looping', async () => {
    const path = join(temporaryDirectory(), 'inventory.json');
    const files = new FaultyFiles();
    let clock = 0;
    const { file, store } = await openStore(path, files, () => clock);
    const renames = files.calls.rename; // Creating the data file renamed once.
    files.failRename = 'EIO';
    // Past 1024 journal entries a snapshot is due after every commit; it fails each time.
    for (let round = 0; round < 12; round++) {
      await Promise.all(
        Array.from({ length: 100 }, (_, i) => store.setQuantity(BigInt((i % 20) + 1), round * 100 + i)),
      );
    }
    expect(files.calls.rename - renames).toBe(1);
    clock += 1000;
    await store.setQuantity(1n, 1);
    expect(files.calls.rename - renames).toBe(2);
    files.failRename = undefined;
    clock += 2000;
    await store.setQuantity(1n, 2);
    await store.close();
    expect(files.calls.rename - renames).toBe(3);
    // The snapshot went first and folded in all 1,200 lines; the update that triggered it followed.
    expect(readJournal(path)).toBe('{"petId":1,"quantity":2}\n');
    expect(readFileSync(path, 'utf8')).toContain('{"petId":20,"quantity":1199,');
    await file.close();
    expect((await reload(path)).get(1n)).toBe(2);
  });
});

describe('petinv serve with a full disk', () => {
  let running: RunningServer | undefined;
  afterEach(async () => {
    await running?.close().catch(() => {});
    running = undefined;
  });

  it('answers 507 with nothing applied, and shows only what is durable', async () => {
    const directory = temporaryDirectory();
    const files = new FaultyFiles();
    running = await startInventoryServer({
      port: 0,
      apiKeys: ['k'],
      dataFile: join(directory, 'inventory.json'),
      files,
    });
    const url = running.baseUrl;
    expect((await request(`${url}/inventory/1`, jsonBody('k', '{"quantity":11}'))).status).toBe(200);
    files.spaceLeft = 5;
    const refused = await request(`${url}/inventory/2`, jsonBody('k', '{"quantity":22}'));
    expect(refused.status).toBe(507);
    expect(refused.json()).toEqual({
      code: 'insufficient_storage',
      message: expect.any(String),
      status: 507,
    });
    expect(refused.text).not.toContain(directory);
    const list = (await request(`${url}/inventory`, { headers: bearer('k') })).text;
    expect(list).toContain('{"petId":1,"quantity":11,');
    expect(list).not.toContain('{"petId":2,"quantity":22,');
  });

  it('a start refused for its port after cutting a torn last commit it had no room to keep names those bytes', async () => {
    const { path } = await journalEndingTorn();
    const torn = TORN_COMMIT;
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const { port } = busy.address() as AddressInfo;
    const files = new FaultyFiles();
    files.spaceLeft = 5;
    try {
      const refusal = await startInventoryServer({ port, apiKeys: ['k'], dataFile: path, files }).catch(
        (error: unknown) => error,
      );
      // The start cut the bytes from the journal before the port refused it, and no notice is logged for a
      // refused start: the refusal is the only place left that holds them.
      expect(refusal).toBeInstanceOf(ServeError);
      expect((refusal as ServeError).message).toMatch(/already in use/);
      expect((refusal as ServeError).message).toContain(Buffer.from(torn).toString('base64'));
      expect(readFileSync(`${path}.journal`, 'utf8')).not.toContain(torn);
    } finally {
      await new Promise((resolve) => busy.close(resolve));
    }
  });

  it('a --recover start refused for its port names the commits it could not replay and where the journal went', async () => {
    const directory = temporaryDirectory();
    const path = join(directory, 'inventory.json');
    const { file, store } = await openStore(path, new FaultyFiles());
    for (const [petId, quantity] of [
      [1n, 11],
      [2n, 22],
      [3n, 33],
    ] as const)
      await store.setQuantity(petId, quantity);
    await file.close();
    // A changed digit in the second commit: the third, acknowledged, follows it.
    const journal = readFileSync(`${path}.journal`, 'utf8');
    writeFileSync(`${path}.journal`, journal.replace('"quantity":22', '"quantity":29'));
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const { port } = busy.address() as AddressInfo;
    try {
      const refusal = await startInventoryServer({
        port,
        apiKeys: ['k'],
        dataFile: path,
        recover: true,
      }).catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(ServeError);
      const { message } = refusal as ServeError;
      expect(message).toMatch(/already in use/);
      // The recovery was made (the next start finds a sound journal and says nothing): the refusal tells it.
      const moved = readdirSync(directory).find((name) => name.includes('.journal.damaged-'));
      expect(moved).toBeDefined();
      expect(message).toContain('1 complete commit (1 update) after the damage was not replayed');
      expect(message).toContain(join(directory, moved ?? ''));
    } finally {
      await new Promise((resolve) => busy.close(resolve));
    }
  });

  it('on a stop whose final snapshot fails, keeps the old snapshot and the journal, and says so', async () => {
    const directory = temporaryDirectory();
    const path = join(directory, 'inventory.json');
    const files = new FaultyFiles();
    running = await startInventoryServer({ port: 0, apiKeys: ['k'], dataFile: path, files });
    await request(`${running.baseUrl}/inventory/7`, jsonBody('k', '{"quantity":77}'));
    const snapshot = readFileSync(path);
    files.spaceLeft = 0;
    const stopping = running.close();
    running = undefined;
    const failure = await stopping.catch((error: unknown) => error);
    // A ServeError is what `petinv serve` turns into its one-line message and exit code 3.
    expect(failure).toBeInstanceOf(ServeError);
    expect((failure as ServeError).message).toMatch(/no space left.*journal .* intact/);
    expect(readFileSync(path)).toEqual(snapshot);
    expect(leftovers(directory)).toEqual([]);
    expect(readdirSync(directory)).not.toContain('inventory.json.lock');
    expect((await reload(path)).get(7n)).toBe(77);
  });
});
