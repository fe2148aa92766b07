import { parseInventoryJson } from '../contract/json';
import { describeIssues, type InventoryItem } from '../contract/schemas';
import { JournalEntry, journalExtent } from './data-format';
import { decodeText } from './data-path';
import { ServeError } from './errors';
import { type JournalChange, type JournalDamage, type JournalScan, scanJournal } from './journal-format';

/** The journal replayed over the snapshot's items at a start, this version's or the previous one's. */

export const commitsText = (count: number) => `${count} complete commit${count === 1 ? '' : 's'}`;
export const updatesText = (count: number) => `${count} update${count === 1 ? '' : 's'}`;

/** The journal as a start found it: what was replayed, and what follows the sound part. */
export interface JournalState {
  /** `checked`: this version's; `lines`: the previous version's, without checksums; `empty`: nothing in it. */
  format: JournalScan['format'];
  /** Where its sound part ends (all of it, unless torn or damaged). */
  soundEnd: number;
  /** Commits (this version's format) and updates replayed. */
  commits: number;
  entries: number;
  /** What follows the sound part: a torn last commit or line (never acknowledged), or with `recover`, damage. */
  damage?: JournalDamage;
}

export const NO_JOURNAL: JournalState = { format: 'empty', soundEnd: 0, commits: 0, entries: 0 };

/** Applies journal changes to the items; a change naming a pet the data file lacks refuses the start. */
function applyChanges(
  changes: readonly JournalChange[],
  items: InventoryItem[],
  positions: Map<bigint, number>,
  where: string,
): void {
  for (const change of changes) {
    const position = positions.get(change.petId);
    const item = position === undefined ? undefined : items[position];
    if (position === undefined || !item)
      throw new ServeError(
        `${where} names pet ${change.petId}, which the data file lacks; it was left as it is`,
      );
    items[position] = { ...item, quantity: change.quantity };
  }
}

/** Applies the journal; damage a crash does not explain refuses the start, unless `recover` (what is before it). */
export function replayJournal(
  path: string,
  bytes: Buffer,
  items: InventoryItem[],
  recover: boolean,
): JournalState {
  const positions = new Map(items.map((item, position) => [item.petId, position]));
  const scan = scanJournal(bytes);
  if (scan.format === 'empty') return NO_JOURNAL;
  if (scan.format === 'lines') return replayJournalLines(path, bytes, items, positions, recover);
  const { damage } = scan;
  if (damage?.kind === 'damaged' && !recover)
    throw new ServeError(
      `journal ${path} is damaged at byte offset ${damage.offset} (${damage.reason}), and ${commitsText(damage.commitsAfter)} (${updatesText(damage.updatesAfter)}) ${damage.commitsAfter === 1 ? 'follows' : 'follow'} it: no crash leaves that, and acknowledged updates may be lost there; every file was left as it is. Keep a copy of it, then start with --recover to serve everything before the damage (the journal is moved aside, not removed)`,
    );
  let entries = 0;
  for (const commit of scan.commits) {
    applyChanges(commit.changes, items, positions, `journal ${path} commit ${commit.sequence}`);
    entries += commit.changes.length;
  }
  return {
    format: 'checked',
    soundEnd: scan.soundEnd,
    commits: scan.commits.length,
    entries,
    ...(damage ? { damage } : {}),
  };
}

function legacyChange(line: string): JournalChange | { invalid: string } {
  try {
    const parsed = JournalEntry.safeParse(parseInventoryJson(line));
    if (!parsed.success) return { invalid: describeIssues(parsed.error, [], 'the line') };
    return parsed.data;
  } catch (error) {
    return { invalid: (error as Error).message };
  }
}

/** What follows the sound lines of the previous version's journal; `after`: the valid lines after it. */
function lineDamage(kind: JournalDamage['kind'], offset: number, reason: string, after = 0): JournalDamage {
  return { kind, offset, reason, commitsAfter: after, updatesAfter: after };
}

/**
 * The previous version's journal, read as that version read it (it has no checksums to check). A line
 * that is not a change, or bytes after a stretch of zeros that no crash leaves, refuse the start, unless
 * `recover`: then the lines before it apply, and the rest is reported as not replayed.
 */
function replayJournalLines(
  path: string,
  bytes: Buffer,
  items: InventoryItem[],
  positions: Map<bigint, number>,
  recover: boolean,
): JournalState {
  const { linesEnd, unfinishedBytes, strayBytesAt } = journalExtent(bytes);
  const lines = decodeText(bytes, linesEnd, 'journal', path).split('\n');
  lines.pop();
  let offset = 0;
  let damage: JournalDamage | undefined;
  let entries = 0;
  for (const [index, line] of lines.entries()) {
    const change = legacyChange(line);
    if ('invalid' in change) {
      const after = lines.slice(index + 1).filter((rest) => !('invalid' in legacyChange(rest))).length;
      damage = lineDamage('damaged', offset, `line ${index + 1} is invalid (${change.invalid})`, after);
      break;
    }
    applyChanges([change], items, positions, `journal ${path} line ${index + 1}`);
    entries++;
    offset += Buffer.byteLength(line) + 1;
  }
  if (!damage && strayBytesAt !== undefined)
    damage = lineDamage(
      'damaged',
      linesEnd,
      `a stretch of zeros, then bytes at offset ${strayBytesAt}, which no write cut short by a crash leaves`,
    );
  if (damage && !recover)
    throw new ServeError(
      `journal ${path}, written by an earlier petinv, is damaged at byte offset ${damage.offset} (${damage.reason}); every file was left as it is. Keep a copy of it, then start with --recover to serve everything before the damage (the journal is moved aside, not removed)`,
    );
  return {
    format: 'lines',
    soundEnd: damage ? damage.offset : linesEnd,
    commits: entries,
    entries,
    damage: damage ?? (unfinishedBytes > 0 ? lineDamage('torn', linesEnd, 'an incomplete line') : undefined),
  };
}
