import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeCommit, JOURNAL_HEADER, scanJournal } from '../../src/server/journal-format';

/**
 * The journal's reading rules, on bytes alone: what a crash can leave (complete commits, then one torn)
 * is always told from damage (anything else), and damage is never taken for a crash when a complete
 * commit follows it.
 */

type Change = { petId: bigint; quantity: number };

const changeArbitrary = fc.record({
  petId: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
  quantity: fc.integer({ min: 0, max: 2_147_483_647 }),
});
const commitsArbitrary = fc.array(fc.array(changeArbitrary, { minLength: 1, maxLength: 5 }), {
  minLength: 1,
  maxLength: 12,
});

function journalOf(commits: readonly Change[][]): { bytes: Buffer; starts: number[] } {
  const parts: Buffer[] = [JOURNAL_HEADER];
  const starts: number[] = [];
  let at = JOURNAL_HEADER.length;
  commits.forEach((changes, index) => {
    const line = encodeCommit(index + 1, changes);
    starts.push(at);
    at += line.length;
    parts.push(line);
  });
  return { bytes: Buffer.concat(parts), starts };
}

function checked(bytes: Buffer) {
  const scan = scanJournal(bytes);
  if (scan.format !== 'checked') throw new Error(`format ${scan.format}`);
  return scan;
}

describe('the journal format', () => {
  it('reads back every commit written, in order', () => {
    fc.assert(
      fc.property(commitsArbitrary, (commits) => {
        const scan = checked(journalOf(commits).bytes);
        expect(scan.damage).toBeUndefined();
        expect(scan.commits.map((commit) => commit.changes)).toEqual(commits);
      }),
    );
  });

  it('takes a last commit cut short anywhere, or with a stretch of zeros, for a torn one, and keeps the rest', () => {
    fc.assert(
      fc.property(commitsArbitrary, fc.nat(), fc.nat(), fc.boolean(), (commits, a, b, zeros) => {
        const { bytes, starts } = journalOf(commits);
        const last = starts.at(-1) ?? 0;
        const length = bytes.length - last;
        const torn = Buffer.from(bytes);
        let end = bytes.length;
        if (zeros) {
          // Some stretch of the last commit never written: zeros, as a crash leaves them.
          const from = last + (a % length);
          torn.fill(0, from, from + 1 + (b % (bytes.length - from)));
        } else end = last + (a % length); // Cut short: its first bytes only.
        const scan = checked(torn.subarray(0, end));
        expect(scan.commits).toHaveLength(commits.length - 1);
        expect(scan.soundEnd).toBe(last);
        if (end > last) expect(scan.damage).toMatchObject({ kind: 'torn', offset: last, commitsAfter: 0 });
        else expect(scan.damage).toBeUndefined();
      }),
    );
  });

  it('takes any changed byte for damage, never for a crash, and counts the complete commits after it', () => {
    fc.assert(
      fc.property(commitsArbitrary, fc.nat(), fc.integer({ min: 1, max: 255 }), (commits, a, delta) => {
        const { bytes, starts } = journalOf(commits);
        const at = JOURNAL_HEADER.length + (a % (bytes.length - JOURNAL_HEADER.length));
        const changed = Buffer.from(bytes);
        changed[at] = ((changed[at] ?? 0) + delta) % 256;
        const scan = checked(changed);
        const index = starts.filter((start) => start <= at).length - 1;
        expect(scan.commits).toHaveLength(index);
        const damage = scan.damage;
        // A changed last line end (or a byte turned to zero in the last commit) is what a torn write leaves.
        if (damage?.kind === 'torn') {
          expect(index).toBe(commits.length - 1);
          expect(changed[at] === 0 || at === bytes.length - 1).toBe(true);
          return;
        }
        expect(damage?.kind).toBe('damaged');
        expect(damage?.offset).toBe(starts[index]);
        // A changed line end joins two commits: the one after it is lost with the damaged one.
        const after = commits.length - index - 1;
        expect(damage?.commitsAfter).toBeGreaterThanOrEqual(Math.max(0, after - 1));
        expect(damage?.commitsAfter).toBeLessThanOrEqual(after);
      }),
    );
  });

  it('takes a zeroed sector with complete commits after it for damage, however it falls', () => {
    const commits = Array.from({ length: 60 }, (_, i) => [{ petId: BigInt(i + 1), quantity: 1000 + i }]);
    const { bytes, starts } = journalOf(commits);
    for (let sector = 0; sector * 512 + 1024 < bytes.length; sector++) {
      const damaged = Buffer.from(bytes).fill(0, sector * 512, sector * 512 + 512);
      const scan = checked(damaged);
      const complete = starts.filter((start) => start >= sector * 512 + 512).length;
      expect(scan.damage?.kind).toBe('damaged');
      expect(scan.damage?.commitsAfter).toBe(complete);
    }
  });

  it('refuses a journal of zeros, or without its header, or with commits out of order', () => {
    expect(checked(Buffer.alloc(4096)).damage).toMatchObject({
      kind: 'damaged',
      offset: 0,
      reason: 'zeros only, where its header belongs',
    });
    const { bytes } = journalOf([[{ petId: 1n, quantity: 1 }], [{ petId: 2n, quantity: 2 }]]);
    expect(
      checked(Buffer.concat([Buffer.from('petinv-journal 3\n'), bytes.subarray(17)])).damage,
    ).toMatchObject({
      kind: 'damaged',
      offset: 0,
      commitsAfter: 2,
    });
    const twice = Buffer.concat([
      JOURNAL_HEADER,
      encodeCommit(1, [{ petId: 1n, quantity: 1 }]),
      encodeCommit(1, []),
    ]);
    expect(checked(twice).damage).toMatchObject({
      kind: 'damaged',
      reason: 'commit 2: commit number 1 where 2 belongs',
    });
  });

  it('tells an empty file and the previous version apart', () => {
    expect(scanJournal(Buffer.alloc(0))).toEqual({ format: 'empty' });
    expect(scanJournal(Buffer.from('{"petId":1,"quantity":2}\n'))).toEqual({ format: 'lines' });
    expect(checked(JOURNAL_HEADER)).toEqual({
      format: 'checked',
      commits: [],
      soundEnd: JOURNAL_HEADER.length,
    });
  });
});

describe('a commit that holds no changes, in words', () => {
  it('names the changes, not an HTTP body', async () => {
    const { crc32 } = await import('node:zlib');
    const payload = '{"petId":1,"quantity":2}';
    const line = `1 ${crc32(payload, crc32('1 ')).toString(16).padStart(8, '0')} ${payload}\n`;
    const scan = scanJournal(Buffer.concat([JOURNAL_HEADER, Buffer.from(line)]));
    expect(scan).toMatchObject({
      damage: { reason: 'commit 1: changes that are not valid (the changes: must be array)' },
    });
  });
});
