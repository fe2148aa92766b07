import { constants, fstatSync, lstatSync, statSync } from 'node:fs';
import { serializeItems } from '../contract/json';
import { comparePetIds } from '../contract/rules';
import type { InventoryItem } from '../contract/schemas';
import { moveDurably, syncDirectory } from '../files/atomic-write';
import { describeFileSystemError, type FileSystem, isOutOfSpace, JOURNAL_WRITE } from '../files/file-system';
import type { LoadedInventory } from './data-load';
import { ServeError } from './errors';
import { Journal } from './journal';
import { JOURNAL_HEADER, type JournalDamage } from './journal-format';
import { type JournalState, NO_JOURNAL } from './journal-replay';
import { closeQuietly, createJournal, permissionsOf, replaceSnapshot, writeNewFile } from './snapshot-file';

/**
 * Opening the journal a start has read (data-load.ts) for appends: a torn last commit kept in a side file
 * and cut, a journal of the previous version folded into a new snapshot, a damaged one (with --recover
 * only) moved aside. Each step that removes bytes from the journal first makes durable where they went.
 */

/** What a start did to the journal it found, for serve to tell. */
export interface JournalReport {
  /**
   * A torn last commit (never acknowledged), cut from the journal: its length, and the file now holding
   * it; or, when the disk was too full for that file, its bytes (base64) for the start's notice to log.
   */
  torn?: { bytes: number; keptAt: string } | { bytes: number; base64: string };
  /** Updates of a previous version's journal, folded into a new snapshot (with its checksum). */
  foldedLegacyEntries?: number;
  recovered?: ReturnType<typeof recoveredReport>;
}

/** --recover: where the damage was, what was not replayed, where the journal went (none with --in-memory). */
export const recoveredReport = (state: JournalState, damage: JournalDamage, keptAt?: string) => ({
  offset: damage.offset,
  reason: damage.reason,
  ...(keptAt === undefined ? {} : { keptAt }),
  commitsReplayed: state.commits,
  updatesReplayed: state.entries,
  commitsLost: damage.commitsAfter,
  updatesLost: damage.updatesAfter,
});

/** `FILE.journal.<what>-20261125T180512Z` (then `-2`, `-3`, ...): a name beside the journal not yet taken. */
function asideName(journalPath: string, what: string): string {
  const stamp = new Date().toISOString().replace(/[-:]|\.\d+(?=Z$)/g, '');
  const base = `${journalPath}.${what}-${stamp}`;
  for (let n = 1; ; n++) {
    const candidate = n === 1 ? base : `${base}-${n}`;
    if (!lstatSync(candidate, { throwIfNoEntry: false })) return candidate;
  }
}

const snapshotBody = (items: readonly InventoryItem[]): Buffer =>
  Buffer.from(serializeItems([...items].sort((a, b) => comparePetIds(a.petId, b.petId))));

/** Opens the journal at `path`, which must exist, for writing; refuses one a third user owns. */
function openExisting(files: FileSystem, path: string, dataFile: { permissions: number; owner: number }) {
  let fd: number;
  try {
    // Never created here: a journal gone since it was read must not come back empty, commits written past its end.
    fd = files.openSync(path, JOURNAL_WRITE & ~constants.O_CREAT, dataFile.permissions);
  } catch (error) {
    throw new ServeError(`cannot open journal ${path}: ${describeFileSystemError(error)}`);
  }
  const { uid: owner } = fstatSync(fd);
  const runAs = process.getuid?.();
  // Root's is accepted too, as ssh accepts root's files: root can change anything anyway.
  if (runAs !== undefined && owner !== dataFile.owner && owner !== runAs && owner !== 0) {
    // Planted by a third user (in a shared directory, between the data file's creation and this open):
    // whatever it holds, or is given later, would be replayed into the inventory at the next start.
    closeQuietly(files, fd);
    throw new ServeError(
      `journal ${path} belongs to another user (uid ${owner}) than its data file and this serve; check what it holds, then remove it or give it the data file's owner`,
    );
  }
  return fd;
}

/**
 * Keeps the torn last commit's bytes in a side file, durably, then cuts them from the journal. A disk too
 * full for the side file does not stop the start (a full disk after kill -9 must not): the commit was never
 * acknowledged, and its bytes go to the start's notice, in the log, instead.
 */
async function cutTornCommit(
  files: FileSystem,
  journalPath: string,
  fd: number,
  bytes: Buffer,
  soundEnd: number,
  { permissions }: { permissions: number },
): Promise<NonNullable<JournalReport['torn']>> {
  const torn = bytes.subarray(soundEnd);
  let kept: NonNullable<JournalReport['torn']>;
  let keptAt = '';
  try {
    keptAt = asideName(journalPath, 'torn');
    await writeNewFile(files, keptAt, torn, permissions);
    kept = { bytes: torn.length, keptAt };
  } catch (error) {
    if (!isOutOfSpace(error))
      throw new ServeError(
        `journal ${journalPath} ends in a commit a crash cut short (never acknowledged), which serve keeps in ${keptAt} before it cuts it, and that file could not be written: ${describeFileSystemError(error)}; every file was left as it is, so fix the directory and start again`,
      );
    kept = { bytes: torn.length, base64: torn.toString('base64') };
  }
  try {
    files.ftruncateSync(fd, soundEnd);
    await files.fsync(fd);
  } catch (error) {
    const where = 'keptAt' in kept ? `it is kept in ${keptAt}` : 'the journal still holds it';
    throw new ServeError(
      `cannot cut the torn last commit from journal ${journalPath}: ${describeFileSystemError(error)}; ${where}`,
    );
  }
  return kept;
}

/** Makes the journal a start loaded ready for appends, and says what that took; `items` as replayed. */
export async function openJournal(
  files: FileSystem,
  dataPath: string,
  loaded: LoadedInventory | undefined,
  items: readonly InventoryItem[],
): Promise<{ journal: Journal; report: JournalReport }> {
  const { journal: state = NO_JOURNAL, journalBytes: bytes = Buffer.alloc(0) } = loaded ?? {};
  const dataFile = { permissions: permissionsOf(dataPath), owner: statSync(dataPath).uid };
  const journalPath = `${dataPath}.journal`;
  const report: JournalReport = {};
  const fresh = { entries: 0, bytes: JOURNAL_HEADER.length, commits: 0 };
  const { damage } = state;

  if (state.format === 'checked' && damage?.kind !== 'damaged') {
    const fd = openExisting(files, journalPath, dataFile);
    try {
      if (damage) report.torn = await cutTornCommit(files, journalPath, fd, bytes, state.soundEnd, dataFile);
      await syncDirectory(files, journalPath);
    } catch (error) {
      closeQuietly(files, fd);
      if (error instanceof ServeError) throw error;
      throw new ServeError(`cannot prepare journal ${journalPath}: ${describeFileSystemError(error)}`);
    }
    const start = { entries: state.entries, bytes: state.soundEnd, commits: state.commits };
    return { journal: new Journal(journalPath, fd, start, files), report };
  }

  const folding = state.format === 'lines' && damage?.kind !== 'damaged';
  try {
    if (folding) {
      // The previous version's journal has no checksums: its lines are folded into a snapshot that has
      // one, and a new journal takes its place. A torn last line is kept aside first, as in this format.
      if (damage) {
        const keptAt = asideName(journalPath, 'torn');
        const torn = bytes.subarray(state.soundEnd);
        await writeNewFile(files, keptAt, torn, dataFile.permissions);
        report.torn = { bytes: torn.length, keptAt };
      }
      await replaceSnapshot(files, dataPath, snapshotBody(items));
      report.foldedLegacyEntries = state.entries;
    } else if (damage) {
      // --recover: what is sound before the damage goes into a new snapshot first, then the damaged
      // journal is moved aside whole (a rename: byte for byte), then a new journal takes its place. A crash
      // between the steps leaves a start that refuses again, or one that finds no journal: nothing lost.
      await replaceSnapshot(files, dataPath, snapshotBody(items));
      const keptAt = asideName(journalPath, 'damaged');
      await moveDurably(files, journalPath, keptAt);
      report.recovered = recoveredReport(state, damage, keptAt);
    }
    await createJournal(files, dataPath, journalPath);
  } catch (error) {
    if (error instanceof ServeError) throw error;
    const doing = folding
      ? `fold journal ${journalPath}, written by an earlier petinv, into a new snapshot`
      : damage
        ? `recover from damaged journal ${journalPath}`
        : `create journal ${journalPath}`;
    throw new ServeError(
      `cannot ${doing}: ${describeFileSystemError(error)}; what is on disk still loads as it did`,
    );
  }
  const fd = openExisting(files, journalPath, dataFile);
  return { journal: new Journal(journalPath, fd, fresh, files), report };
}
