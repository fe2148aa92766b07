import { configError } from '../errors';
import { tryLock } from '../files/lock';

/**
 * The config file's lock (see files/lock.ts). Every read-modify-write of the config holds it, so two
 * commands run at once cannot both read the old file and each write back a version without the other's
 * change. A holder keeps it for milliseconds, so a writer waits its turn rather than failing.
 */

export interface LockOptions {
  /** How long to wait for another holder before giving up. */
  waitMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

const DEFAULT_WAIT_MS = 10_000;
/** A lock from another host cannot be checked; this old, its holder is surely gone. */
const ABANDONED_AFTER_MS = 60_000;

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
    let attempt: ReturnType<typeof tryLock>;
    try {
      attempt = tryLock(path, { mode: 0o600, abandonUncheckableAfterMs: ABANDONED_AFTER_MS });
    } catch (error) {
      const { code } = error as NodeJS.ErrnoException;
      throw configError(`cannot create the lock file ${path} (${code ?? (error as Error).message})`);
    }
    if (attempt.acquired) {
      try {
        return await work();
      } finally {
        attempt.release();
      }
    }
    if (Date.now() - started >= waitMs) {
      const holder = attempt.heldBy;
      const owner = holder ? ` by pid ${holder.pid}${holder.host ? ` on ${holder.host}` : ''}` : '';
      throw configError(
        `the config file is locked${owner} (${path}); try again, or delete the lock file if no petinv is running`,
      );
    }
    // Short waits first: a holder keeps the lock for a few milliseconds.
    await sleep(Math.min(5 * 2 ** Math.min(round, 4), 50) * (0.5 + Math.random()));
  }
}
