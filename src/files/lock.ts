import { closeSync, fstatSync, lstatSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import {
  CREATE_EXCLUSIVE,
  type FileSystem,
  nodeFileSystem,
  READ_NO_FOLLOW,
  randomHex,
  writeFully,
} from './file-system';

/**
 * A lock file that names its owner: the pid on the first line (for `kill $(head -1 FILE.lock)`), then
 * the host, the process's start time and the boot it belongs to, so that a lock whose pid was reused by
 * an unrelated process after a crash is still seen to be stale. The config file and serve's data file
 * are locked with it.
 *
 * - Taken atomically with its owner already recorded: written whole under a private name, then linked
 *   into place. There is no moment at which another process finds it empty.
 * - Broken only while holding a short-lived breaker lock (`LOCK.break`), and only if it is still the very
 *   lock found stale: same inode and same owner record (an inode number is handed to the next new file as
 *   soon as it is freed, so it alone is no identity). Only breakers remove another's lock, and a breaker
 *   runs alone, so a fresh lock taken meanwhile is never removed: two processes can never both hold it.
 */

export interface LockOwner {
  pid: number;
  host?: string;
  start?: string;
  boot?: string;
}

export interface LockOptions {
  files?: FileSystem;
  mode?: number;
  /**
   * A lock whose owner cannot be checked (another host, or a record without a pid) counts as abandoned
   * once it is this old; undefined: never.
   */
  abandonUncheckableAfterMs?: number;
}

export type LockAttempt =
  | { acquired: true; release: () => void }
  | { acquired: false /** Undefined when the lock names no owner (yet). */; heldBy: LockOwner | undefined };

/** Paths this process holds: a second holder in the same process is refused too. */
const held = new Set<string>();

/** A record without a pid is being written by an older petinv, or was abandoned: this long decides which. */
const UNRECORDED_STALE_MS = 10_000;
/** A breaker holds its lock for microseconds; one older than this died holding it. */
const BREAKER_STALE_MS = 10_000;

function readProc(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined; // Not Linux, or the process is gone.
  }
}

/** The fields of /proc/PID/stat from the third on (the state, ...); undefined where there is no /proc. */
function procStat(pid: number): string[] | undefined {
  const stat = readProc(`/proc/${pid}/stat`);
  // The command name (field 2) may hold spaces and parentheses; the fields after its last ')' do not.
  return stat?.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** Field 22 of /proc/PID/stat: clock ticks from boot to the process's start. */
export function processStartTime(pid: number): string | undefined {
  return procStat(pid)?.[19];
}

/**
 * Whether `pid` has exited and only waits for its parent to collect its status (state Z or X): signal 0
 * still reaches it, for as long as the parent does not look, and in some containers that is for ever.
 */
export function isZombie(pid: number): boolean {
  const state = procStat(pid)?.[0];
  return state === 'Z' || state === 'X';
}

export const bootId = () => readProc('/proc/sys/kernel/random/boot_id')?.trim();

/** The record a lock taken by `pid` holds; exported for tests that stand in for another process. */
export function describeLockOwner(pid: number): string {
  const start = processStartTime(pid);
  const boot = bootId();
  return `${pid}\nhost=${hostname()}\n${start ? `start=${start}\n` : ''}${boot ? `boot=${boot}\n` : ''}`;
}

function parseOwner(text: string): LockOwner | undefined {
  const [first, ...rest] = text.split('\n');
  const pid = Number(first);
  if (!Number.isSafeInteger(pid) || pid <= 0) return undefined;
  const field = (name: string) => rest.find((line) => line.startsWith(`${name}=`))?.slice(name.length + 1);
  // An older petinv wrote the host alone on the second line.
  const host = field('host') ?? (rest[0] && !rest[0].includes('=') ? rest[0] : undefined);
  return { pid, host, start: field('start'), boot: field('boot') };
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  return !isZombie(pid);
}

/** Whether the process that took the lock still runs: same host, pid, boot and start time. */
function ownerIsAlive(owner: LockOwner, lockPath: string, ageMs: number, options: LockOptions): boolean {
  if (owner.host && owner.host !== hostname()) {
    const limit = options.abandonUncheckableAfterMs;
    return limit === undefined || ageMs < limit;
  }
  if (owner.pid === process.pid) return held.has(lockPath);
  if (!isRunning(owner.pid)) return false;
  const boot = bootId();
  if (owner.boot && boot && owner.boot !== boot) return false;
  const start = processStartTime(owner.pid);
  if (owner.start && start) return owner.start === start;
  if (start !== undefined) {
    // A record without a start time, from an older petinv: its pid counts only if it is a petinv still.
    return (readProc(`/proc/${owner.pid}/cmdline`) ?? '').includes('petinv');
  }
  return true;
}

interface FoundLock {
  owner: LockOwner | undefined;
  /** The inode and the record together: which lock this is. */
  identity: string;
  ageMs: number;
}

function readLock(lockPath: string): FoundLock | undefined {
  let fd: number;
  try {
    fd = nodeFileSystem.openSync(lockPath, READ_NO_FOLLOW);
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    if (code === 'ENOENT') return undefined;
    if (code !== 'ELOOP') throw error;
    // A symlink planted at the lock's name names no owner; it is broken like a stale lock.
    const stat = lstatSync(lockPath);
    return { owner: undefined, identity: `${stat.ino} link`, ageMs: Date.now() - stat.mtimeMs };
  }
  try {
    const stat = fstatSync(fd);
    const record = readFileSync(fd, 'utf8');
    return { owner: parseOwner(record), identity: `${stat.ino} ${record}`, ageMs: Date.now() - stat.mtimeMs };
  } finally {
    closeSync(fd);
  }
}

function unlinkQuietly(files: FileSystem, path: string): void {
  try {
    files.unlinkSync(path);
  } catch {
    // Already gone.
  }
}

/** Removes the lock at `lockPath` if it is still the one with `identity`, holding the breaker lock. */
function breakStaleLock(lockPath: string, identity: string, files: FileSystem): void {
  const breaker = `${lockPath}.break`;
  try {
    files.closeSync(files.openSync(breaker, CREATE_EXCLUSIVE, 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // Another process is breaking it; the caller tries again. A breaker that died is cleared after a while.
    const stat = lstatSync(breaker, { throwIfNoEntry: false });
    if (stat && Date.now() - stat.mtimeMs > BREAKER_STALE_MS) unlinkQuietly(files, breaker);
    return;
  }
  try {
    if (readLock(lockPath)?.identity === identity) files.unlinkSync(lockPath);
  } finally {
    unlinkQuietly(files, breaker);
  }
}

/**
 * Takes the lock at `lockPath`, or says who holds it. A stale lock (its owner gone) is broken and taken.
 * File-system failures are thrown as they are, for the caller to put in its own words.
 */
export function tryLock(lockPath: string, options: LockOptions = {}): LockAttempt {
  const files = options.files ?? nodeFileSystem;
  if (held.has(lockPath)) return { acquired: false, heldBy: { pid: process.pid } };
  const record = Buffer.from(describeLockOwner(process.pid));
  for (let attempt = 0; attempt < 4; attempt++) {
    const temporary = `${lockPath}.${randomHex(8)}.tmp`;
    let linked = false;
    try {
      const fd = files.openSync(temporary, CREATE_EXCLUSIVE, options.mode ?? 0o644);
      try {
        writeFully(files, fd, record);
      } finally {
        files.closeSync(fd);
      }
      files.linkSync(temporary, lockPath);
      linked = true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      unlinkQuietly(files, temporary);
    }
    if (linked) {
      const identity = `${lstatSync(lockPath).ino} ${record}`;
      held.add(lockPath);
      return {
        acquired: true,
        release: () => {
          held.delete(lockPath);
          // Only our own lock is removed: nobody breaks a live owner's, so it is still ours.
          if (readLock(lockPath)?.identity === identity) unlinkQuietly(files, lockPath);
        },
      };
    }
    const found = readLock(lockPath);
    if (!found) continue; // Released meanwhile: try again.
    const alive = found.owner
      ? ownerIsAlive(found.owner, lockPath, found.ageMs, options)
      : found.ageMs < UNRECORDED_STALE_MS;
    if (alive) return { acquired: false, heldBy: found.owner };
    breakStaleLock(lockPath, found.identity, files);
  }
  return { acquired: false, heldBy: readLock(lockPath)?.owner };
}
