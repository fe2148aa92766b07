import { randomBytes } from 'node:crypto';
import { closeSync, fstatSync, lstatSync, readFileSync } from 'node:fs';
import { configError } from '../errors';
import {
  CREATE_EXCLUSIVE,
  describeFileSystemError,
  type FileSystem,
  nodeFileSystem,
  READ_NO_FOLLOW,
  writeFully,
} from './file-system';

/**
 * `FILE.lock` claims a data file for one serve. It names its owner: the pid on the first line (for
 * `kill $(head -1 FILE.lock)`), then the process's start time and the boot it belongs to, so a lock
 * whose pid was reused by an unrelated process after a crash is still seen to be stale.
 */

interface LockOwner {
  pid: number;
  start?: string;
  boot?: string;
}

/** Paths this process holds: a second server in the same process must be refused too. */
const heldLocks = new Set<string>();

function readProc(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined; // Not Linux, or the process is gone.
  }
}

/** Field 22 of /proc/PID/stat: clock ticks from boot to the process's start. */
function processStartTime(pid: number): string | undefined {
  const stat = readProc(`/proc/${pid}/stat`);
  // The command name (field 2) may hold spaces and parentheses; the fields after its last ')' do not.
  return stat?.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
}

const bootId = () => readProc('/proc/sys/kernel/random/boot_id')?.trim();

function describeOwner(pid: number): string {
  const start = processStartTime(pid);
  const boot = bootId();
  return `${pid}\n${start ? `start=${start}\n` : ''}${boot ? `boot=${boot}\n` : ''}`;
}

function parseOwner(text: string): LockOwner | undefined {
  const [first, ...rest] = text.split('\n');
  const pid = Number(first);
  if (!Number.isSafeInteger(pid) || pid <= 0) return undefined;
  const field = (name: string) => rest.find((line) => line.startsWith(`${name}=`))?.slice(name.length + 1);
  return { pid, start: field('start'), boot: field('boot') };
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether the process that wrote the lock still runs: same pid, same boot, same start time. */
function ownerIsAlive(owner: LockOwner, lockedPath: string): boolean {
  if (owner.pid === process.pid) return heldLocks.has(lockedPath);
  if (!isRunning(owner.pid)) return false;
  const boot = bootId();
  if (owner.boot && boot && owner.boot !== boot) return false;
  const start = processStartTime(owner.pid);
  if (owner.start && start) return owner.start === start;
  if (start !== undefined) {
    // A lock without a start time, from an older petinv: its pid counts only if it is a petinv still.
    const commandLine = readProc(`/proc/${owner.pid}/cmdline`) ?? '';
    return commandLine.includes('petinv');
  }
  return true;
}

function readLock(lockPath: string): { owner: LockOwner | undefined; inode: number } | undefined {
  let fd: number;
  try {
    fd = nodeFileSystem.openSync(lockPath, READ_NO_FOLLOW);
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    if (code === 'ENOENT') return undefined;
    // A symlink planted at the lock's name is no owner: it is moved aside like a stale lock.
    if (code === 'ELOOP') return { owner: undefined, inode: lstatSync(lockPath).ino };
    throw error;
  }
  try {
    return { owner: parseOwner(readFileSync(fd, 'utf8')), inode: fstatSync(fd).ino };
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

const inUse = (path: string, pid: number) =>
  configError(
    `data file ${path} is in use by another petinv serve (pid ${pid}); stop it or choose another file with --data`,
  );

/**
 * Claims the data file at `path` (already resolved to the real file) for this process. The lock is
 * written whole under a private name and linked into place, so it never exists without its owner. A
 * stale lock is moved aside under a private name before a new one is linked, and only by the start
 * that moved that very lock (same inode): two starts taking over at once cannot both win.
 */
export async function lockDataFile(
  path: string,
  files: FileSystem = nodeFileSystem,
): Promise<() => Promise<void>> {
  const lockPath = `${path}.lock`;
  if (heldLocks.has(path)) throw inUse(path, process.pid);
  const ownerText = Buffer.from(describeOwner(process.pid));
  const cannotLock = (error: unknown) =>
    configError(`cannot lock data file ${path} (${lockPath}): ${describeFileSystemError(error)}`);

  for (let attempt = 0; attempt < 8; attempt++) {
    const unique = randomBytes(8).toString('hex');
    const temporary = `${lockPath}.${unique}.tmp`;
    let linked = false;
    try {
      const fd = files.openSync(temporary, CREATE_EXCLUSIVE, 0o644);
      try {
        writeFully(files, fd, ownerText);
      } finally {
        files.closeSync(fd);
      }
      files.linkSync(temporary, lockPath);
      linked = true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        unlinkQuietly(files, temporary);
        throw cannotLock(error);
      }
    }
    unlinkQuietly(files, temporary);
    if (linked) {
      const inode = lstatSync(lockPath).ino;
      heldLocks.add(path);
      return async () => {
        heldLocks.delete(path);
        // Only our own lock is removed, never one a later start put there.
        if (readLock(lockPath)?.inode === inode) unlinkQuietly(files, lockPath);
      };
    }

    const held = readLock(lockPath);
    if (!held) continue;
    if (held.owner && ownerIsAlive(held.owner, path)) throw inUse(path, held.owner.pid);
    const aside = `${lockPath}.${unique}.stale`;
    try {
      files.renameSync(lockPath, aside);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue; // Another start moved it first.
      throw cannotLock(error);
    }
    if (lstatSync(aside).ino !== held.inode) {
      // Between reading and moving, another start replaced the stale lock with its live one: give it back.
      try {
        files.linkSync(aside, lockPath);
      } catch {
        // A third start already holds the name; the owner we displaced will find its lock gone at unlock.
      }
    }
    unlinkQuietly(files, aside);
  }
  throw configError(`cannot lock data file ${path}: ${lockPath} keeps changing; is another serve starting?`);
}
