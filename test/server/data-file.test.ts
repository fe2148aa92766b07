import {
  chmodSync,
  chownSync,
  closeSync,
  copyFileSync,
  existsSync,
  lstatSync,
  openSync,
  readFileSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InventoryFile } from '../../src/server/data-file';
import { readInventoryFile } from '../../src/server/data-load';
import { InventoryStore, seedInventory } from '../../src/server/store';
import { readJournal } from '../helpers/journal';
import { temporaryDirectory } from '../helpers/serve';

const seed = () => seedInventory(3);

/** The data file and its journal as a kill -9 leaves them, copied to a directory of their own. */
function copyAsCrashLeftIt(path: string): string {
  const copy = join(temporaryDirectory(), 'inventory.json');
  copyFileSync(path, copy);
  copyFileSync(`${path}.journal`, `${copy}.journal`);
  return copy;
}

async function openStore(path: string) {
  const { file, items } = await InventoryFile.open(path, seed, { minJournalEntries: 1024 });
  return { file, store: new InventoryStore(items, file) };
}

describe('InventoryFile: snapshot plus journal', () => {
  it('journals each acknowledged change and replays it on the next open', async () => {
    const path = join(temporaryDirectory(), 'inventory.json');
    const { file, store } = await openStore(path);
    await store.setQuantity(2n, 42);
    expect(readJournal(path)).toBe('{"petId":2,"quantity":42}\n');
    await file.close();
    const reopened = await InventoryFile.open(path, seed);
    expect(reopened.items.find((item) => item.petId === 2n)?.quantity).toBe(42);
    await reopened.file.close();
  });

  it('removes the temporary files of snapshots a killed serve left, and nothing else', async () => {
    const directory = temporaryDirectory();
    const path = join(directory, 'inventory.json');
    await (await openStore(path)).file.close();
    const abandoned = join(directory, '.inventory.json.0123456789abcdef.tmp');
    writeFileSync(abandoned, '{"format":"petinv-inventory","items":[');
    const kept = [
      '.inventory.json.notrandomatall.tmp',
      '.other.json.0123456789abcdef.tmp',
      'inventory.json.0123456789abcdef.tmp',
    ];
    for (const name of kept) writeFileSync(join(directory, name), 'mine');
    symlinkSync(join(directory, 'inventory.json'), join(directory, '.inventory.json.fedcba9876543210.tmp'));
    const { file } = await openStore(path);
    expect(existsSync(abandoned)).toBe(false);
    for (const name of kept) expect(readFileSync(join(directory, name), 'utf8')).toBe('mine');
    expect(lstatSync(join(directory, '.inventory.json.fedcba9876543210.tmp')).isSymbolicLink()).toBe(true);
    await file.close();
  });

  it('folds the journal into the snapshot on a clean close', async () => {
    const path = join(temporaryDirectory(), 'inventory.json');
    const { file, store } = await openStore(path);
    await store.setQuantity(3n, 7);
    await file.close(() => store.listBody());
    expect(statSync(`${path}.journal`).size).toBe(0); // Emptied, zeros and all.
    expect(readFileSync(path, 'utf8')).toContain('{"petId":3,"quantity":7,');
  });

  it('keeps the permissions the operator gave the data file when it writes a new snapshot', async () => {
    const path = join(temporaryDirectory(), 'inventory.json');
    const first = await openStore(path);
    await first.file.close();
    chmodSync(path, 0o600);
    const { file, store } = await openStore(path);
    await store.setQuantity(3n, 8);
    await file.close(() => store.listBody());
    expect(readFileSync(path, 'utf8')).toContain('{"petId":3,"quantity":8,');
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('creates the journal as private as the data file it belongs to', async () => {
    const path = join(temporaryDirectory(), 'inventory.json');
    await (await openStore(path)).file.close();
    unlinkSync(`${path}.journal`);
    chmodSync(path, 0o600);
    await (await openStore(path)).file.close();
    expect(statSync(`${path}.journal`).mode & 0o777).toBe(0o600);
  });

  it('drops a torn last line, which was never acknowledged', async () => {
    const path = join(temporaryDirectory(), 'inventory.json');
    const { file, store } = await openStore(path);
    await store.setQuantity(1n, 5);
    await file.close();
    // Where the next write would have gone: over the zeros, right after the last line.
    const journal = openSync(`${path}.journal`, 'r+');
    writeSync(journal, '{"petId":1,"quan', '{"petId":1,"quantity":5}\n'.length);
    closeSync(journal);
    const reopened = await InventoryFile.open(path, seed);
    expect(reopened.items.find((item) => item.petId === 1n)?.quantity).toBe(5);
    expect(readJournal(path)).toBe('{"petId":1,"quantity":5}\n');
    await reopened.file.close();
  });

  it('writes each append over zeros laid down ahead of it, which a restart after a crash drops unreported', async () => {
    const path = join(temporaryDirectory(), 'inventory.json');
    const { file, store } = await openStore(path);
    await store.setQuantity(1n, 5);
    const length = statSync(`${path}.journal`).size;
    expect(length).toBeGreaterThanOrEqual(16 * 1024);
    await store.setQuantity(2n, 6);
    // Written over the zeros: the file is no longer than it was.
    expect(statSync(`${path}.journal`).size).toBe(length);
    const lines = '{"petId":1,"quantity":5}\n{"petId":2,"quantity":6}\n';
    expect(readJournal(path)).toBe(lines);

    const crashed = copyAsCrashLeftIt(path);
    expect(readInventoryFile(crashed).items.map((item) => item.quantity)).toEqual([
      5,
      6,
      seed()[2]?.quantity,
    ]);
    const reopened = await InventoryFile.open(crashed, seed);
    expect(reopened.items.map((item) => item.quantity)).toEqual([5, 6, seed()[2]?.quantity]);
    expect(reopened.droppedJournalBytes).toBe(0);
    // Cut to its lines, so the next append cannot land on anything but zeros or the end.
    expect(readFileSync(`${crashed}.journal`, 'utf8')).toBe(lines);
    await reopened.file.close();
    await file.close();
  });

  it('drops whatever a write cut short left among the zeros, and appends after the last complete line', async () => {
    const path = join(temporaryDirectory(), 'inventory.json');
    const { file, store } = await openStore(path);
    await store.setQuantity(1n, 5);
    const crashed = copyAsCrashLeftIt(path);
    await file.close();
    // A torn write: its first bytes and its next sector reached the disk, the part between did not.
    const journal = openSync(`${crashed}.journal`, 'r+');
    const start = '{"petId":1,"quantity":5}\n'.length;
    writeSync(journal, '{"petId":2,"quan', start);
    writeSync(journal, 'tity":7}\n{"petId":3,"quantity":8}\n', 512);
    closeSync(journal);

    const reopened = await InventoryFile.open(crashed, seed);
    expect(reopened.items.map((item) => item.quantity)).toEqual([
      5,
      seed()[1]?.quantity,
      seed()[2]?.quantity,
    ]);
    expect(reopened.droppedJournalBytes).toBe('{"petId":2,"quantity":7}\n{"petId":3,"quantity":8}\n'.length);
    expect(readFileSync(`${crashed}.journal`, 'utf8')).toBe('{"petId":1,"quantity":5}\n');

    const reopenedStore = new InventoryStore(reopened.items, reopened.file);
    await reopenedStore.setQuantity(3n, 9);
    const crashedAgain = copyAsCrashLeftIt(crashed);
    expect(readJournal(crashedAgain)).toBe('{"petId":1,"quantity":5}\n{"petId":3,"quantity":9}\n');
    const again = await InventoryFile.open(crashedAgain, seed);
    expect(again.items.map((item) => item.quantity)).toEqual([5, seed()[1]?.quantity, 9]);
    expect(again.droppedJournalBytes).toBe(0);
    await again.file.close();
    await reopened.file.close();
  });

  it('refuses bytes after a stretch of zeros that no torn write leaves, and leaves the journal as it is', async () => {
    const path = join(temporaryDirectory(), 'inventory.json');
    await (await openStore(path)).file.close();
    // Lines written after the journal was shortened under a running serve: zeros up to where it had
    // reached, not to a sector's boundary. Dropping them would drop acknowledged updates.
    const journal = Buffer.concat([
      Buffer.from('{"petId":1,"quantity":10}\n'),
      Buffer.alloc(100),
      Buffer.from('{"petId":2,"quantity":20}\n'),
      Buffer.alloc(100),
    ]);
    writeFileSync(`${path}.journal`, journal);
    await expect(InventoryFile.open(path, seed)).rejects.toThrow(
      /holds bytes at offset 126 after a stretch of zeros, .*; it was left as it is/,
    );
    expect(readFileSync(`${path}.journal`)).toEqual(journal);
  });

  it('loads a journal of zeros alone, with nothing to report', async () => {
    const path = join(temporaryDirectory(), 'inventory.json');
    await (await openStore(path)).file.close();
    writeFileSync(`${path}.journal`, Buffer.alloc(20_000));
    const reopened = await InventoryFile.open(path, seed);
    expect(reopened.items).toEqual(seed());
    expect(reopened.droppedJournalBytes).toBe(0);
    expect(statSync(`${path}.journal`).size).toBe(0);
    await reopened.file.close();
  });

  it.each([
    ['a malformed line', '{"petId":1,"quantity":5}\nnot json\n', /line 2 is invalid/],
    [
      'a line with a bad quantity',
      '{"petId":1,"quantity":-5}\n',
      /line 1 is invalid \(quantity: must not be negative\)/,
    ],
    ['an unknown pet', '{"petId":99,"quantity":5}\n', /names pet 99, which the data file lacks/],
  ])('refuses a journal with %s and leaves it as it is', async (_name, journal, message) => {
    const path = join(temporaryDirectory(), 'inventory.json');
    const { file } = await openStore(path);
    await file.close();
    writeFileSync(`${path}.journal`, journal);
    await expect(InventoryFile.open(path, seed)).rejects.toThrow(message);
    expect(readJournal(path)).toBe(journal);
  });

  it('refuses a journal whose data file is missing, rather than seeding over it', async () => {
    const path = join(temporaryDirectory(), 'inventory.json');
    writeFileSync(`${path}.journal`, '{"petId":1,"quantity":5}\n');
    await expect(InventoryFile.open(path, seed)).rejects.toThrow('exists without its data file');
    expect(existsSync(path)).toBe(false);
  });

  it('refuses a data file that lists a petId twice', async () => {
    const path = join(temporaryDirectory(), 'inventory.json');
    writeFileSync(
      path,
      '{"format":"petinv-inventory","version":1,"items":[{"petId":1,"quantity":1,"status":"sold"},{"petId":1,"quantity":2,"status":"sold"}]}',
    );
    await expect(InventoryFile.open(path, seed)).rejects.toThrow('lists petId 1 twice');
  });

  it('writes a new snapshot once the journal outgrows the inventory', async () => {
    const path = join(temporaryDirectory(), 'inventory.json');
    const { file, store } = await openStore(path);
    for (let i = 0; i < 1100; i++) await store.setQuantity(1n, i + 1);
    expect(readJournal(path).split('\n').length).toBeLessThan(1025);
    expect(readFileSync(path, 'utf8')).toContain('{"petId":1,"quantity":1025,');
    await file.close();
    const reopened = await InventoryFile.open(path, seed);
    expect(reopened.items[0]?.quantity).toBe(1100);
    await reopened.file.close();
  });
});

describe.skipIf(process.getuid?.() !== 0)(
  'InventoryFile: whose journal (root only, to hand files to another user)',
  () => {
    const NOBODY = 65534;

    it('refuses a journal a third user owns, rather than replay what that user wrote or writes', async () => {
      const path = join(temporaryDirectory(), 'inventory.json');
      const { file, store } = await openStore(path);
      await store.setQuantity(1n, 11);
      await file.close();
      chownSync(`${path}.journal`, NOBODY, NOBODY);
      await expect(InventoryFile.open(path, seed)).rejects.toThrow(
        `journal ${path}.journal belongs to another user (uid ${NOBODY}) than its data file and this serve`,
      );
    });

    it("accepts a journal of the data file's owner, or of the user serve runs as", async () => {
      const path = join(temporaryDirectory(), 'inventory.json');
      const { file, store } = await openStore(path);
      await store.setQuantity(1n, 11);
      await file.close();
      chownSync(path, NOBODY, NOBODY); // The journal stays serve's own.
      const reopened = await InventoryFile.open(path, seed);
      await reopened.file.close();
      chownSync(`${path}.journal`, NOBODY, NOBODY); // Now both are the data file owner's.
      const again = await InventoryFile.open(path, seed);
      expect(again.items.find((item) => item.petId === 1n)?.quantity).toBe(11);
      await again.file.close();
    });
  },
);
