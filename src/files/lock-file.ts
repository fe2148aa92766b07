import { lstatSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { writeFileAtomicSync } from './atomic-write';
import {
  CREATE_EXCLUSIVE,
  type FileSystem,
  nodeFileSystem,
  quietly,
  READ_NO_FOLLOW,
  tryOr,
  withOpenFile,
} from './file-system';
import { describeLockOwner, isTornRecord, type LockOwner, ownerIsRunning, parseOwner } from './lock-record';

/**
 * The lock file `PATH.lock` (lock.ts), naming its owner (lock-record.ts), linked into place whole so that
 * nobody finds it empty. It is broken only under a breaker lock (`LOCK.break`), and only if it is still the
 * very lock found stale: same inode and same record (an inode number alone is reused at once). A breaker
 * runs alone, so a fresh lock taken meanwhile is never removed: two processes never both hold it.
 */

export interface LockOptions {
  files?: FileSystem;
  mode?: number;
  /** A lock whose owner cannot be checked (another host, no pid) is abandoned once this old; undefined: never. */
  abandonUncheckableAfterMs?: number;
  /** An empty or torn record is stale at once (the caller holds a claim no live new owner could lack). */
  tornIsStale?: boolean;
}

export type LockAttempt =
  | { acquired: true; release: () => void }
  | { acquired: false /** Undefined when the lock names no owner (yet). */; heldBy: LockOwner | undefined };

/** Puts `record` at `lockPath` whole (atomic-write.ts, never replacing); false when a lock is there. */
function linkRecord(lockPath: string, record: Buffer, mode: number, files: FileSystem): boolean {
  try {
    writeFileAtomicSync(lockPath, record, { files, mode, replace: false });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/** Paths this process holds: a second holder in the same process is refused too. */
const held = new Set<string>();

/** A record without a pid is being written by an older petinv, or was abandoned: this long decides which. */
const UNRECORDED_STALE_MS = 10_000;
/** A breaker holds its lock for microseconds; one older than this died holding it. */
const BREAKER_STALE_MS = 10_000;

interface FoundLock {
  owner: LockOwner | undefined;
  torn: boolean;
  /** The inode and the record together: which lock this is. */
  identity: string;
  ageMs: number;
  /** Its bytes and mode, for putBackLockFile: a regular file of a few lines, as a record is. */
  kept?: KeptLockFile;
}

function readLock(lockPath: string): FoundLock | undefined {
  try {
    return withOpenFile(lockPath, READ_NO_FOLLOW, (fd, stat) => {
      const bytes = readFileSync(fd);
      const record = bytes.toString('utf8');
      return {
        owner: parseOwner(record),
        torn: isTornRecord(record),
        identity: `${stat.ino} ${record}`,
        ageMs: Date.now() - stat.mtimeMs,
        kept: stat.isFile() && stat.size <= 4096 ? { bytes, mode: stat.mode & 0o777 } : undefined,
      };
    });
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    if (code === 'ENOENT') return undefined;
    if (code !== 'ELOOP') throw error;
    // A symlink planted at the lock's name names no owner; it is broken like a stale lock.
    const stat = lstatSync(lockPath);
    return { owner: undefined, torn: true, identity: `${stat.ino} link`, ageMs: Date.now() - stat.mtimeMs };
  }
}

/** Removes the lock at `lockPath` if it is still the one with `identity`, holding the breaker lock. */
function breakStaleLock(lockPath: string, identity: string, files: FileSystem, options: LockOptions): void {
  const breaker = `${lockPath}.break`;
  try {
    files.closeSync(files.openSync(breaker, CREATE_EXCLUSIVE, 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // Another process is breaking it, and the caller tries again; a breaker that died is cleared.
    const stat = lstatSync(breaker, { throwIfNoEntry: false });
    // A caller holding serve's claims races no other breaker of this petinv: one left is a killed one's.
    const abandoned = options.tornIsStale === true || (stat && Date.now() - stat.mtimeMs > BREAKER_STALE_MS);
    if (stat && abandoned) quietly(() => files.unlinkSync(breaker));
    return;
  }
  try {
    if (readLock(lockPath)?.identity === identity) files.unlinkSync(lockPath);
  } finally {
    quietly(() => files.unlinkSync(breaker));
  }
}

/** Whether the lock found is stale: its owner gone, or (tornIsStale) its record never written whole. */
function isStale({ owner, torn, ageMs }: FoundLock, lockPath: string, options: LockOptions): boolean {
  if (options.tornIsStale && torn) return true;
  if (!owner) return ageMs >= UNRECORDED_STALE_MS;
  // An owner on another host cannot be checked from here.
  const limit = options.abandonUncheckableAfterMs;
  if (owner.host !== undefined && owner.host !== hostname()) return limit !== undefined && ageMs >= limit;
  if (owner.pid === process.pid) return !held.has(lockPath);
  return !ownerIsRunning(owner);
}

/** Takes the lock file at `lockPath` (breaking a stale one), or says who holds it; other failures thrown as they are. */
export function tryLock(lockPath: string, options: LockOptions = {}): LockAttempt {
  const files = options.files ?? nodeFileSystem;
  if (held.has(lockPath)) return { acquired: false, heldBy: { pid: process.pid } };
  const record = Buffer.from(describeLockOwner(process.pid));
  for (let attempt = 0; attempt < 4; attempt++) {
    if (linkRecord(lockPath, record, options.mode ?? 0o644, files)) {
      const identity = `${lstatSync(lockPath).ino} ${record}`;
      held.add(lockPath);
      return {
        acquired: true,
        release: () => {
          held.delete(lockPath);
          // Only our own lock is removed: nobody breaks a live owner's, so it is still ours.
          if (readLock(lockPath)?.identity === identity) quietly(() => files.unlinkSync(lockPath));
        },
      };
    }
    const found = readLock(lockPath);
    if (!found) continue; // Released meanwhile: try again.
    if (!isStale(found, lockPath, options)) return { acquired: false, heldBy: found.owner };
    breakStaleLock(lockPath, found.identity, files, options);
  }
  return { acquired: false, heldBy: readLock(lockPath)?.owner };
}

/** Removes the lock file at `lockPath` if it is stale or torn; never fails (a holder of serve's claims calls it). */
export function removeStaleLock(lockPath: string, options: LockOptions): void {
  const found = tryOr(() => readLock(lockPath), undefined);
  if (found && isStale(found, lockPath, { ...options, tornIsStale: true }))
    quietly(() => (options.files ?? nodeFileSystem).unlinkSync(lockPath));
}

/** A lock file as a start found it (one a killed serve left, say): its bytes and mode. */
export type KeptLockFile = { bytes: Buffer; mode: number };

/** The lock file at `lockPath` as it is now, for putBackLockFile; undefined when there is none. */
export function keepLockFile(lockPath: string): KeptLockFile | undefined {
  return tryOr(() => readLock(lockPath)?.kept, undefined);
}

/**
 * Puts back the (stale) lock file a refused start took over: a refused start leaves every file as it was,
 * and that one names the serve that wrote a damaged journal. Never over a lock taken meanwhile.
 */
export function putBackLockFile(lockPath: string, kept: KeptLockFile | undefined): void {
  // No room: none is put back, which no start minds.
  if (kept) quietly(() => linkRecord(lockPath, kept.bytes, kept.mode, nodeFileSystem));
}
