import { existsSync, lstatSync, readFileSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { describeFileSystemError, type FileSystem, tryOr } from '../files/file-system';
import { acquireLock, type HeldLock, LockHeldError } from '../files/lock';
import { ServeError } from './errors';
import { JOURNAL_HEADER } from './journal-format';

/**
 * Claims the data file at `path` (the real file) for this process however it is reached, as
 * docs/serve-operations.md says; a dead serve's lock is taken over, even when its pid was reused.
 */
export async function lockDataFile(path: string, files?: FileSystem): Promise<HeldLock> {
  const lockPath = `${path}.lock`;
  return acquireLock(lockPath, { files, identityOf: path }).catch((error: unknown) => {
    if (!(error instanceof LockHeldError))
      throw new ServeError(`cannot lock data file ${path} (${lockPath}): ${describeFileSystemError(error)}`);
    const holder = error.heldBy;
    if (holder?.host && holder.host !== hostname()) {
      // Its liveness cannot be checked from here; a container restarted under a new host name looks the same.
      throw new ServeError(
        `data file ${path} is in use by another petinv serve (pid ${holder.pid} on host ${holder.host}); stop it, or, if that serve is gone, remove ${lockPath}`,
      );
    }
    const owner = holder ? ` (pid ${holder.pid})` : ' (it did not say its pid in time)';
    // The same file by another name: a hard link, a bind mount (the holder says which name it uses).
    const byAnotherName =
      error.via === 'identity' && holder?.path && holder.path !== path
        ? `, which reaches the same file as ${holder.path}`
        : '';
    throw new ServeError(
      `data file ${path} is in use by another petinv serve${owner}${byAnotherName}; stop it or choose another file with --data`,
    );
  });
}

/** Whether `path` is a mount point (a single-file bind mount): /proc/self/mountinfo's fifth field, unescaped. */
function isMountPoint(path: string): boolean {
  const mounts = tryOr(() => readFileSync('/proc/self/mountinfo', 'utf8'), undefined);
  if (mounts === undefined) return false;
  const unescaped = (field: string) =>
    field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
  return mounts.split('\n').some((line) => {
    const point = line.split(' ')[4];
    return point !== undefined && unescaped(point) === path;
  });
}

/**
 * What a refusal of a single-file bind mount adds when a journal with commits lies beside the mount (an
 * earlier petinv's, serving through it): its updates are nowhere else, and the advised serve never reads it.
 */
function journalBesideMount(dataFile: string): string {
  const journal = `${dataFile}.journal`;
  // No journal there counts as an empty one.
  if (tryOr(() => lstatSync(journal).size, 0) <= JOURNAL_HEADER.length) return '';
  return `. ${journal} beside the mount holds updates made through it that the data file lacks, and a serve on the file's directory never reads it: first serve a copy of the data file with that journal beside it (the two in one directory), and bind-mount what that serve writes`;
}

/**
 * Why a data file with other names (hard links) and no journal beside this one must not be served through
 * it, or undefined: the journal is beside the name serve was started with, and a start through another
 * name after kill -9 would serve the snapshot without it. A backup made with a link is refused so.
 */
function linkedElsewhere(dataFile: string): string | undefined {
  const links = tryOr(() => statSync(dataFile).nlink, 1); // Not there yet: a new data file.
  if (links <= 1 || existsSync(`${dataFile}.journal`)) return undefined;
  return `data file ${dataFile} has ${links - 1} other name${links === 2 ? '' : 's'} (hard links) and no journal beside this one: a serve started through another name keeps its journal beside that name, so this start would serve the data file without the updates that journal holds; start serve through the name it was started with, or make this one a copy of its own (cp, not ln)`;
}

/** Refuses a data file that other names reach in a way serve cannot keep durable (see above). */
export function refuseOtherNames(dataFile: string): void {
  if (isMountPoint(dataFile))
    throw new ServeError(
      `data file ${dataFile} is a mount point of its own (a single-file bind mount): no snapshot can replace it (each is a new file renamed into place), and its journal would be kept beside the mount, not beside the file, where a serve on the file itself never sees it; bind-mount the data file's directory instead${journalBesideMount(dataFile)}`,
    );
  const otherName = linkedElsewhere(dataFile);
  if (otherName) throw new ServeError(otherName);
}
