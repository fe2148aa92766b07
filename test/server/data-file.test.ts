import { createHash } from 'node:crypto';
import {
  appendFileSync,
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  lstatSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InventoryFile } from '../../src/server/data-file';
import { readInventoryFile } from '../../src/server/data-load';
import { ServeError } from '../../src/server/errors';
import { encodeCommit, JOURNAL_HEADER } from '../../src/server/journal-format';
import { InventoryStore, seedInventory } from '../../src/server/store';
import { readCommits, readJournal } from '../helpers/journal';
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
    expect(statSync(`${path}.journal`).size).toBe(JOURNAL_HEADER.length); // Emptied: its header alone.
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

  it('keeps the commits of a journal a crash left, and cuts nothing', async () => {
    const path = join(temporaryDirectory(), 'inventory.json');
    const { file, store } = await openStore(path);
    await store.setQuantity(1n, 5);
    await store.setQuantity(2n, 6);
    const crashed = copyAsCrashLeftIt(path);
    const journal = readFileSync(`${crashed}.journal`);
    expect(readCommits(crashed)).toEqual([[[1, 5]], [[2, 6]]]);
    expect(readInventoryFile(crashed).items.map((item) => item.quantity)).toEqual([
      5,
      6,
      seed()[2]?.quantity,
    ]);
    const reopened = await InventoryFile.open(crashed, seed);
    expect(reopened.items.map((item) => item.quantity)).toEqual([5, 6, seed()[2]?.quantity]);
    expect(reopened.journal).toEqual({});
    expect(readFileSync(`${crashed}.journal`)).toEqual(journal);
    // The next commit follows on, numbered 3.
    await new InventoryStore(reopened.items, reopened.file).setQuantity(3n, 7);
    expect(readCommits(crashed)).toEqual([[[1, 5]], [[2, 6]], [[3, 7]]]);
    expect(readFileSync(`${crashed}.journal`, 'utf8')).toMatch(
      /\n3 [0-9a-f]{8} \[\{"petId":3,"quantity":7\}\]\n$/,
    );
    await reopened.file.close();
    await file.close();
  });

  it.each([
    ['cut short', (commit: Buffer) => commit.subarray(0, 20)],
    [
      'with a stretch a crash left as zeros',
      (commit: Buffer) => Buffer.concat([commit.subarray(0, 5), Buffer.alloc(commit.length - 5)]),
    ],
    [
      'with its line end never written',
      (commit: Buffer) => Buffer.concat([commit.subarray(0, -1), Buffer.alloc(1)]),
    ],
  ])(
    'keeps a torn last commit (%s) in a side file, cuts it, and appends after the last sound one',
    async (_name, tear) => {
      const path = join(temporaryDirectory(), 'inventory.json');
      const { file, store } = await openStore(path);
      await store.setQuantity(1n, 5);
      await file.close();
      const torn = tear(encodeCommit(2, [{ petId: 2n, quantity: 7 }]));
      appendFileSync(`${path}.journal`, torn);
      const reopened = await InventoryFile.open(path, seed);
      expect(reopened.items.map((item) => item.quantity)).toEqual([
        5,
        seed()[1]?.quantity,
        seed()[2]?.quantity,
      ]);
      const { torn: kept } = reopened.journal;
      const keptAt = kept && 'keptAt' in kept ? kept.keptAt : '';
      expect(reopened.journal.torn).toEqual({
        bytes: torn.length,
        keptAt: expect.stringMatching(/\.journal\.torn-\d{8}T\d{6}Z$/),
      });
      expect(readFileSync(keptAt)).toEqual(torn);
      expect(readJournal(path)).toBe('{"petId":1,"quantity":5}\n');
      await new InventoryStore(reopened.items, reopened.file).setQuantity(3n, 9);
      expect(readCommits(path)).toEqual([[[1, 5]], [[3, 9]]]);
      await reopened.file.close();
      const again = await InventoryFile.open(path, seed);
      expect(again.items.map((item) => item.quantity)).toEqual([5, seed()[1]?.quantity, 9]);
      expect(again.journal).toEqual({});
      await again.file.close();
    },
  );

  /** A journal of `commits` sound commits (pet 1 to 3, in turn), as kill -9 leaves it, and its path. */
  async function journalOf(commits: number): Promise<string> {
    const path = join(temporaryDirectory(), 'inventory.json');
    const { file, store } = await openStore(path);
    for (let i = 1; i <= commits; i++) await store.setQuantity(BigInt(((i - 1) % 3) + 1), 100 + i);
    const crashed = copyAsCrashLeftIt(path);
    await file.close();
    return crashed;
  }

  const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

  /** Damages the journal of `path` with `damage`, expects the open refused with `message`, every file as it was. */
  async function expectRefused(path: string, damage: (journal: Buffer) => void, message: RegExp) {
    const journal = readFileSync(`${path}.journal`);
    damage(journal);
    writeFileSync(`${path}.journal`, journal);
    const before = [sha256(path), sha256(`${path}.journal`)];
    const names = readdirSync(dirname(path)).sort();
    const failure = await InventoryFile.open(path, seed).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ServeError);
    expect((failure as Error).message).toMatch(message);
    expect([sha256(path), sha256(`${path}.journal`)]).toEqual(before);
    expect(readdirSync(dirname(path)).sort()).toEqual(names);
  }

  it('refuses a journal with a zeroed 512-byte sector and complete commits after it, touching nothing', async () => {
    const path = await journalOf(40);
    const original = readFileSync(`${path}.journal`);
    const starts: number[] = [];
    for (let at = original.indexOf('\n') + 1; at < original.length; at = original.indexOf('\n', at) + 1)
      starts.push(at);
    const damaged = starts.filter((start) => start <= 512).length; // The commit the sector begins in.
    const offset = starts[damaged - 1];
    const after = starts.filter((start) => start >= 1024).length;
    expect(after).toBeGreaterThan(5);
    await expectRefused(
      path,
      (journal) => journal.fill(0, 512, 1024),
      new RegExp(
        `^journal ${path}\\.journal is damaged at byte offset ${offset} \\(commit ${damaged}: zeros from byte offset 512\\), and ${after} complete commits \\(${after} updates\\) follow it: .*every file was left as it is.*--recover`,
      ),
    );
  });

  it('leaves the snapshot a killed serve was writing when it refuses a damaged journal: every file as it was', async () => {
    const path = await journalOf(40);
    const abandoned = join(dirname(path), `.${basename(path)}.0123456789abcdef.tmp`);
    writeFileSync(abandoned, '{"format":"petinv-inventory","version":2,"crc32":"0000');
    await expectRefused(path, (journal) => journal.fill(0, 512, 1024), /is damaged at byte offset/);
    expect(existsSync(abandoned)).toBe(true);
  });

  it('refuses a journal with one changed digit, in the middle or in the last commit', async () => {
    const path = await journalOf(5);
    const journal = readFileSync(`${path}.journal`);
    const third = journal.indexOf('"quantity":103');
    await expectRefused(
      path,
      (bytes) => bytes.write('4', third + '"quantity":10'.length),
      /damaged at byte offset \d+ \(commit 3: a checksum that does not match\), and 2 complete commits \(2 updates\) follow it/,
    );
    writeFileSync(`${path}.journal`, journal);
    const last = journal.indexOf('"quantity":105');
    await expectRefused(
      path,
      (bytes) => bytes.write('6', last + '"quantity":10'.length),
      /damaged at byte offset \d+ \(commit 5: a checksum that does not match\), and 0 complete commits \(0 updates\) follow it/,
    );
  });

  it('refuses a journal of zeros, and one whose header is gone', async () => {
    const path = await journalOf(3);
    await expectRefused(
      path,
      (journal) => journal.fill(0),
      /damaged at byte offset 0 \(zeros only, where its header belongs\), and 0 complete commits/,
    );
    const other = await journalOf(3);
    await expectRefused(
      other,
      (journal) => journal.fill(0, 0, 10),
      /damaged at byte offset 0 \(no journal header\), and 3 complete commits \(3 updates\) follow it/,
    );
  });

  it('refuses commits out of order', async () => {
    const path = await journalOf(3);
    await expectRefused(
      path,
      (journal) => {
        const second = journal.indexOf('\n2 ') + 1;
        journal.write(encodeCommit(3, [{ petId: 2n, quantity: 102 }]).toString('latin1'), second, 'latin1');
      },
      /commit 2: commit number 3 where 2 belongs/,
    );
  });

  it('--recover starts from what is sound before the damage, moves the journal aside byte for byte, and counts what it could not replay', async () => {
    const path = await journalOf(6);
    const journal = readFileSync(`${path}.journal`);
    const third = journal.indexOf('"quantity":103');
    journal.write('9', third + '"quantity":10'.length);
    writeFileSync(`${path}.journal`, journal);
    const damagedAt = journal.lastIndexOf('\n', third) + 1;
    const reopened = await InventoryFile.open(path, seed, { recover: true });
    // Commits 1 and 2 (pets 1 and 2); not commit 3 (damaged) nor 4 to 6 after it.
    expect(reopened.items.map((item) => item.quantity)).toEqual([101, 102, seed()[2]?.quantity]);
    const recovered = reopened.journal.recovered;
    expect(recovered).toEqual({
      offset: damagedAt,
      reason: 'commit 3: a checksum that does not match',
      keptAt: expect.stringMatching(/inventory\.json\.journal\.damaged-\d{8}T\d{6}Z$/),
      commitsReplayed: 2,
      updatesReplayed: 2,
      commitsLost: 3,
      updatesLost: 3,
    });
    expect(dirname(recovered?.keptAt ?? '')).toBe(dirname(path));
    expect(readFileSync(recovered?.keptAt ?? '')).toEqual(journal);
    expect(readFileSync(`${path}.journal`)).toEqual(JOURNAL_HEADER);
    // The recovered state is in the snapshot now: a plain start finds it.
    await new InventoryStore(reopened.items, reopened.file).setQuantity(3n, 33);
    await reopened.file.close();
    const again = await InventoryFile.open(path, seed);
    expect(again.items.map((item) => item.quantity)).toEqual([101, 102, 33]);
    await again.file.close();
  });

  it('--recover with nothing damaged is a plain start', async () => {
    const path = await journalOf(2);
    const reopened = await InventoryFile.open(path, seed, { recover: true });
    expect(reopened.journal).toEqual({});
    expect(reopened.items.map((item) => item.quantity)).toEqual([101, 102, seed()[2]?.quantity]);
    await reopened.file.close();
  });

  it('replays a journal of the previous version (no checksums) as before, folds it into a snapshot, and says so', async () => {
    const path = join(temporaryDirectory(), 'inventory.json');
    writeFileSync(
      path,
      '{"format":"petinv-inventory","version":1,"items":[{"petId":1,"quantity":1,"status":"sold"},{"petId":2,"quantity":2,"status":"sold"}]}\n',
    );
    // Its lines, the zeros it laid ahead, and a torn last line among them.
    writeFileSync(
      `${path}.journal`,
      Buffer.concat([
        Buffer.from('{"petId":1,"quantity":10}\n{"petId":2,"quantity":20}\n{"petId":1,"qua'),
        Buffer.alloc(4000),
      ]),
    );
    const reopened = await InventoryFile.open(path, seed);
    expect(reopened.items.map((item) => item.quantity)).toEqual([10, 20]);
    expect(reopened.journal.foldedLegacyEntries).toBe(2);
    const { torn } = reopened.journal;
    expect(readFileSync(torn && 'keptAt' in torn ? torn.keptAt : '', 'utf8')).toMatch(/^\{"petId":1,"qua\0/);
    expect(readFileSync(path, 'utf8')).toMatch(
      /^\{"format":"petinv-inventory","version":2,"crc32":"[0-9a-f]{8}","items":\[\{"petId":1,"quantity":10,/,
    );
    expect(readFileSync(`${path}.journal`)).toEqual(JOURNAL_HEADER);
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
    [
      'bytes after a stretch of zeros no torn write leaves',
      Buffer.concat([
        Buffer.from('{"petId":1,"quantity":10}\n'),
        Buffer.alloc(100),
        Buffer.from('{"petId":2,"quantity":20}\n'),
      ]),
      /written by an earlier petinv, is damaged at byte offset 26 \(a stretch of zeros, then bytes at offset 126, which no write cut short by a crash leaves\); every file was left as it is\. Keep a copy of it, then start with --recover/,
    ],
  ])(
    'refuses a journal of the previous version with %s and leaves it as it is',
    async (_name, journal, message) => {
      const path = join(temporaryDirectory(), 'inventory.json');
      const { file } = await openStore(path);
      await file.close();
      writeFileSync(`${path}.journal`, journal);
      await expect(InventoryFile.open(path, seed)).rejects.toThrow(message);
      expect(readFileSync(`${path}.journal`)).toEqual(Buffer.from(journal));
    },
  );

  it('--recover over a damaged journal of the previous version: the lines before the damage, the journal moved aside', async () => {
    const path = join(temporaryDirectory(), 'inventory.json');
    const { file } = await openStore(path);
    await file.close();
    const journal = Buffer.from('{"petId":1,"quantity":10}\nnot json\n{"petId":2,"quantity":20}\n');
    writeFileSync(`${path}.journal`, journal);
    await expect(InventoryFile.open(path, seed)).rejects.toThrow(
      /is damaged at byte offset 26 \(line 2 is invalid .*\); every file was left as it is\. Keep a copy of it, then start with --recover/,
    );
    const reopened = await InventoryFile.open(path, seed, { recover: true });
    expect(reopened.items.map((item) => item.quantity)).toEqual([
      10,
      seed()[1]?.quantity,
      seed()[2]?.quantity,
    ]);
    const { recovered } = reopened.journal;
    expect(recovered).toMatchObject({ offset: 26, commitsReplayed: 1, commitsLost: 1, updatesLost: 1 });
    expect(readFileSync(recovered?.keptAt ?? '')).toEqual(journal);
    expect(readFileSync(`${path}.journal`)).toEqual(JOURNAL_HEADER);
    await reopened.file.close();
  });

  it('refuses a commit that names a pet the data file lacks', async () => {
    const path = join(temporaryDirectory(), 'inventory.json');
    await (await openStore(path)).file.close();
    appendFileSync(`${path}.journal`, encodeCommit(1, [{ petId: 99n, quantity: 5 }]));
    await expect(InventoryFile.open(path, seed)).rejects.toThrow(
      /commit 1 names pet 99, which the data file lacks/,
    );
  });

  it('refuses a snapshot whose items changed, naming it, and leaves it as it is', async () => {
    const path = join(temporaryDirectory(), 'inventory.json');
    const { file, store } = await openStore(path);
    await store.setQuantity(2n, 42);
    await file.close(() => store.listBody());
    const snapshot = readFileSync(path);
    const changed = Buffer.from(snapshot);
    changed.write('3', snapshot.indexOf('"quantity":42') + '"quantity":'.length);
    writeFileSync(path, changed);
    await expect(InventoryFile.open(path, seed)).rejects.toThrow(
      new RegExp(
        `^data file ${path} is damaged: its items have checksum [0-9a-f]{8}, not the [0-9a-f]{8} it carries.*left as it is`,
      ),
    );
    expect(readFileSync(path)).toEqual(changed);
    // Laid out by hand (the checksum then covers the items as serve writes them): the same check.
    const pretty = JSON.stringify(JSON.parse(changed.toString()), null, 2);
    writeFileSync(path, pretty);
    await expect(InventoryFile.open(path, seed)).rejects.toThrow(/is damaged: its items have checksum/);
    writeFileSync(path, JSON.stringify(JSON.parse(snapshot.toString()), null, 2));
    const reopened = await InventoryFile.open(path, seed);
    expect(reopened.items[1]?.quantity).toBe(42);
    await reopened.file.close();
  });

  it('loads a hand-made snapshot without a checksum as before, and refuses a version 2 one without it', async () => {
    const path = join(temporaryDirectory(), 'inventory.json');
    const items = '[{"petId":1,"quantity":1,"status":"sold"}]';
    writeFileSync(path, `{"format":"petinv-inventory","version":1,"items":${items}}`);
    const reopened = await InventoryFile.open(path, seed);
    expect(reopened.items).toEqual([{ petId: 1n, quantity: 1, status: 'sold' }]);
    await reopened.file.close();
    writeFileSync(path, `{"format":"petinv-inventory","version":2,"items":${items}}`);
    await expect(InventoryFile.open(path, seed)).rejects.toThrow(/version 2 snapshot without its checksum/);
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
