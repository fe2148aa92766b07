import {
  closeSync,
  fstatSync,
  linkSync,
  openSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { configError } from '../errors';

/**
 * A lock file beside the config file, created with O_EXCL (which also refuses to follow a symlink), holding
 * the owner's pid and host. Every read-modify-write of the config holds it, so two commands run at once
 * cannot both read the old file and each write back a version without the other's change.
 */

export interface LockOptions {
  /** How long to wait for another holder before giving up. */
  waitMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

const DEFAULT_WAIT_MS = 10_000;
/** A holder keeps the lock for milliseconds; a lock this old whose owner cannot be checked is abandoned. */
const ABANDONED_AFTER_MS = 60_000;

interface Holder {
  pid: number | undefined;
  host: string | undefined;
  ino: number;
  ageMs: number;
}

function readHolder(path: string): Holder | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const stat = fstatSync(fd);
    const [pid, host] = readFileSync(fd, 'utf8').split('\n');
    const parsed = Number(pid);
    return {
      pid: Number.isSafeInteger(parsed) && parsed > 0 ? parsed : undefined,
      host: host || undefined,
      ino: stat.ino,
      ageMs: Date.now() - stat.mtimeMs,
    };
  } finally {
    closeSync(fd);
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** A lock left by a process that died: its pid is gone on this host, or it is too old to be in use. */
function isAbandoned(holder: Holder): boolean {
  if (holder.pid !== undefined && holder.host === hostname()) return !isRunning(holder.pid);
  return holder.ageMs > ABANDONED_AFTER_MS;
}

/**
 * Removes an abandoned lock. Renaming it away first means two processes breaking it at once cannot both
 * succeed; if another process replaced it between our look and the rename, its fresh lock is put back.
 */
function breakAbandoned(path: string, holder: Holder) {
  const aside = `${path}.abandoned-${process.pid}-${Date.now()}`;
  try {
    renameSync(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const movedIno = readHolder(aside)?.ino;
  if (movedIno !== holder.ino) {
    try {
      linkSync(aside, path);
    } catch {
      // A third process took the lock meanwhile; the one we moved is that process's, now displaced.
    }
  }
  unlinkSync(aside);
}

function tryCreate(path: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    writeSync(fd, `${process.pid}\n${hostname()}\n`);
  } finally {
    closeSync(fd);
  }
  return true;
}

/** Runs `work` holding the lock at `path`; the lock is released however `work` ends. */
export async function withFileLock<T>(
  path: string,
  work: () => T | Promise<T>,
  options: LockOptions = {},
): Promise<T> {
  const waitMs = options.waitMs ?? DEFAULT_WAIT_MS;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const started = Date.now();
  for (let round = 0; ; round++) {
    let created: boolean;
    try {
      created = tryCreate(path);
    } catch (error) {
      const { code } = error as NodeJS.ErrnoException;
      throw configError(`cannot create the lock file ${path} (${code ?? (error as Error).message})`);
    }
    if (created) break;
    const holder = readHolder(path);
    if (holder && isAbandoned(holder)) {
      breakAbandoned(path, holder);
      continue;
    }
    if (Date.now() - started >= waitMs) {
      const owner = holder?.pid ? ` by pid ${holder.pid}${holder.host ? ` on ${holder.host}` : ''}` : '';
      throw configError(
        `the config file is locked${owner} (${path}); try again, or delete the lock file if no petinv is running`,
      );
    }
    // Short waits first: a holder keeps the lock for a few milliseconds.
    await sleep(Math.min(5 * 2 ** Math.min(round, 4), 50) * (0.5 + Math.random()));
  }
  try {
    return await work();
  } finally {
    try {
      unlinkSync(path);
    } catch {
      // Already gone: nothing to release.
    }
  }
}
