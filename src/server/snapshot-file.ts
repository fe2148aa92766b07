import { lstatSync, readdirSync, statSync, unlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { crc32 } from 'node:zlib';
import { syncDirectory, writeFileAtomic } from '../files/atomic-write';
import { type FileSystem, quietly, StorageError, tryOr } from '../files/file-system';
import { SNAPSHOT_SUFFIX, snapshotPrefix } from './data-format';
import { checksumHex, JOURNAL_HEADER } from './journal-format';

/** The permission bits of the snapshot being replaced: a new one never widens what the operator set. */
export function permissionsOf(path: string): number {
  // None yet (the first snapshot): the usual mode, narrowed by the umask.
  return tryOr(() => statSync(path).mode & 0o777, 0o644);
}

/** Closes `fd` after a failed write: the failure that matters is already being reported. */
export const closeQuietly = (files: FileSystem, fd: number) => quietly(() => files.closeSync(fd));

/** The name of a snapshot being written: beside the data file, hidden, with 16 random hex digits. */
const temporaryName = (path: string, random: string) => `.${basename(path)}.${random}.tmp`;

/** Removes the temporary snapshots a killed serve left beside `path`: this user's files named as a snapshot is. */
export function removeAbandonedSnapshots(path: string): void {
  const directory = dirname(path);
  const prefix = temporaryName(path, '').slice(0, -'.tmp'.length);
  const random = /^[0-9a-f]{16}\.tmp$/;
  // The load that follows reports a directory it cannot read.
  for (const name of tryOr(() => readdirSync(directory), [])) {
    if (!name.startsWith(prefix) || !random.test(name.slice(prefix.length))) continue;
    const candidate = join(directory, name);
    // Gone already, or not ours to remove: it stays.
    quietly(() => {
      const stat = lstatSync(candidate);
      if (stat.isFile() && stat.uid === process.getuid?.()) unlinkSync(candidate);
    });
  }
}

/**
 * Replaces `path` with `parts` durably, through the one atomic writer, under a temporary name that
 * removeAbandonedSnapshots knows, with the data file `dataPath`'s mode. Throws a StorageError naming `what`.
 */
async function replaceFile(
  files: FileSystem,
  path: string,
  dataPath: string,
  parts: readonly Buffer[],
  what: string,
): Promise<void> {
  await writeFileAtomic(path, parts, {
    files,
    mode: permissionsOf(dataPath),
    temporaryName: (random) => temporaryName(dataPath, random),
    fsync: true,
  }).catch((error: unknown) => {
    throw new StorageError(`cannot write ${what}`, error);
  });
  await syncDirectory(files, path).catch((error: unknown) => {
    throw new StorageError(`cannot make ${what} durable`, error);
  });
}

/** Writes `body` (the list GET /inventory serves) as the snapshot at `path`, with its checksum. */
export async function replaceSnapshot(files: FileSystem, path: string, body: Buffer): Promise<void> {
  const parts = [snapshotPrefix(checksumHex(crc32(body))), body, SNAPSHOT_SUFFIX];
  await replaceFile(files, path, path, parts, `a new snapshot of ${path}`);
}

/** Puts a new, empty journal (its header alone) at `journalPath`, in place of any there. */
export async function createJournal(files: FileSystem, dataPath: string, journalPath: string): Promise<void> {
  await replaceFile(files, journalPath, dataPath, [JOURNAL_HEADER], `a new journal ${journalPath}`);
}

/**
 * Writes `bytes` durably to a new file at `path`, never replacing one: evidence kept aside before the
 * journal is cut. Throws what failed, and leaves nothing (nor half a file) at `path`.
 */
export async function writeNewFile(files: FileSystem, path: string, bytes: Buffer, mode: number) {
  await writeFileAtomic(path, bytes, { files, mode, fsync: true, replace: false });
  await syncDirectory(files, path);
}
