import { crc32 } from 'node:zlib';
import * as z from 'zod/mini';
import { parseInventoryJson } from '../contract/json';
import { describeIssues } from '../contract/schemas';
import { JournalEntry } from './data-format';

/**
 * The journal's format on disk, version 2, as docs/serve-durability.md shows it. After a crash: complete
 * commits, then at most one torn commit; anything else that does not check is damage.
 */

export const JOURNAL_HEADER = Buffer.from('petinv-journal 2\n');

const NEWLINE = 0x0a;
const SPACE = 0x20;
const ZERO_BYTE = 0;
const CHECKSUM_DIGITS = 8;

export type JournalChange = z.output<typeof JournalEntry>;

const Changes = z.array(JournalEntry);

/** A checksum as a journal or snapshot carries it: 8 lowercase hex digits. */
export const checksumHex = (value: number): string => value.toString(16).padStart(CHECKSUM_DIGITS, '0');

export function encodeCommit(sequence: number, changes: readonly JournalChange[]): Buffer {
  const payload = `[${changes.map((item) => `{"petId":${item.petId},"quantity":${item.quantity}}`).join(',')}]`;
  const checksum = crc32(payload, crc32(`${sequence} `));
  return Buffer.from(`${sequence} ${checksumHex(checksum)} ${payload}\n`);
}

export interface JournalCommit {
  sequence: number;
  changes: JournalChange[];
  /** Where the next line begins, in bytes. */
  end: number;
}

function decodeCommit(bytes: Buffer, start: number): JournalCommit | { invalid: string } {
  const end = bytes.indexOf(NEWLINE, start);
  // Where the zeros begin says more than where the commit does: a zeroed sector begins at a boundary.
  const zeroAt = bytes.subarray(start, end === -1 ? bytes.length : end).indexOf(ZERO_BYTE);
  if (zeroAt !== -1) return { invalid: `zeros from byte offset ${start + zeroAt}` };
  if (end === -1) return { invalid: 'an incomplete line' };
  const firstSpace = bytes.indexOf(SPACE, start);
  const checksumEnd = firstSpace + 1 + CHECKSUM_DIGITS;
  if (firstSpace === -1 || firstSpace >= end || checksumEnd >= end || bytes[checksumEnd] !== SPACE)
    return { invalid: 'not a commit line' };
  const sequenceText = bytes.toString('latin1', start, firstSpace);
  const checksumText = bytes.toString('latin1', firstSpace + 1, checksumEnd);
  if (!/^[1-9][0-9]{0,15}$/.test(sequenceText) || !/^[0-9a-f]{8}$/.test(checksumText))
    return { invalid: 'not a commit line' };
  const payload = bytes.subarray(checksumEnd + 1, end);
  const computed = crc32(payload, crc32(bytes.subarray(start, firstSpace + 1)));
  if (checksumHex(computed) !== checksumText) return { invalid: 'a checksum that does not match' };
  let changes: JournalChange[];
  try {
    const parsed = Changes.safeParse(parseInventoryJson(payload.toString('utf8')));
    if (!parsed.success)
      return { invalid: `changes that are not valid (${describeIssues(parsed.error, [], 'the changes')})` };
    changes = parsed.data;
  } catch (error) {
    return { invalid: `changes that are not valid JSON (${(error as Error).message})` };
  }
  return { sequence: Number(sequenceText), changes, end: end + 1 };
}

export interface JournalDamage {
  /** `torn`: the last commit, cut short by a crash, never acknowledged; `damaged`: anything else. */
  kind: 'torn' | 'damaged';
  /** Where the first byte that is not part of a sound commit lies. */
  offset: number;
  /** What was found there, for a person. */
  reason: string;
  /** Complete commits found after the damage, and the updates they hold: acknowledged data. */
  commitsAfter: number;
  updatesAfter: number;
}

export type JournalScan =
  /** No journal, or an empty file (one a previous version emptied): nothing to replay. */
  | { format: 'empty' }
  /** A journal of the previous version: JSON lines, no checksums (see data-format.ts). */
  | { format: 'lines' }
  | {
      format: 'checked';
      /** The sound commits, in order, up to the damage if there is any. */
      commits: JournalCommit[];
      soundEnd: number;
      damage?: JournalDamage;
    };

/** The complete commits (each a whole, checked line) found anywhere after `offset`. */
function commitsAfter(bytes: Buffer, offset: number): { commits: number; updates: number } {
  let commits = 0;
  let updates = 0;
  let at = offset + 1;
  while (at < bytes.length) {
    const previous = bytes[at - 1];
    const byte = bytes[at] ?? 0;
    // A line begins after a line end, or after zeros that took the place of one.
    if ((previous === NEWLINE || previous === ZERO_BYTE) && byte >= 0x31 && byte <= 0x39) {
      const found = decodeCommit(bytes, at);
      if (!('invalid' in found)) {
        commits++;
        updates += found.changes.length;
        at = found.end;
        continue;
      }
    }
    at++;
  }
  return { commits, updates };
}

/**
 * Whether the bytes from `offset` to the end are what a crash in the middle of the last commit leaves:
 * one line's worth (no line end but perhaps the very last byte) that is cut short or holds zeros a write
 * never reached. A whole line without zeros that does not check is a changed line: damage.
 */
function looksTorn(bytes: Buffer, offset: number): boolean {
  const rest = bytes.subarray(offset);
  const firstNewline = rest.indexOf(NEWLINE);
  if (firstNewline !== -1 && firstNewline !== rest.length - 1) return false;
  return rest.includes(ZERO_BYTE) || rest[rest.length - 1] !== NEWLINE;
}

function damageAt(bytes: Buffer, offset: number, reason: string, headerIntact: boolean): JournalDamage {
  const { commits, updates } = commitsAfter(bytes, offset);
  const torn = headerIntact && commits === 0 && looksTorn(bytes, offset);
  return { kind: torn ? 'torn' : 'damaged', offset, reason, commitsAfter: commits, updatesAfter: updates };
}

/** Reads a journal's bytes: its sound commits, and where and how the rest (if any) is not sound. */
export function scanJournal(bytes: Buffer): JournalScan {
  if (bytes.length === 0) return { format: 'empty' };
  if (bytes[0] === 0x7b) return { format: 'lines' }; // `{`: the previous version's first line.
  const header = bytes.subarray(0, JOURNAL_HEADER.length);
  if (!header.equals(JOURNAL_HEADER)) {
    const reason = bytes.every((byte) => byte === ZERO_BYTE)
      ? 'zeros only, where its header belongs'
      : 'no journal header';
    return { format: 'checked', commits: [], soundEnd: 0, damage: damageAt(bytes, 0, reason, false) };
  }
  const commits: JournalCommit[] = [];
  let at = JOURNAL_HEADER.length;
  while (at < bytes.length) {
    const found = decodeCommit(bytes, at);
    const expected = commits.length + 1;
    if ('invalid' in found || found.sequence !== expected) {
      const reason =
        'invalid' in found ? found.invalid : `commit number ${found.sequence} where ${expected} belongs`;
      return {
        format: 'checked',
        commits,
        soundEnd: at,
        damage: damageAt(bytes, at, `commit ${expected}: ${reason}`, true),
      };
    }
    commits.push(found);
    at = found.end;
  }
  return { format: 'checked', commits, soundEnd: at };
}
