import { type LockAttempt, type LockOptions, removeStaleLock, tryLock } from './lock-file';
import { claimIdentities, type IdentityOptions } from './lock-identity';
import { LockHeldError } from './lock-record';

export {
  type KeptLockFile,
  keepLockFile,
  type LockAttempt,
  type LockOptions,
  putBackLockFile,
  tryLock,
} from './lock-file';
export {
  bootId,
  describeLockOwner,
  isRunning,
  isSameProcess,
  isZombie,
  LockHeldError,
  type LockOwner,
  processStartTime,
} from './lock-record';

/**
 * petinv's one lock module: the config file's lock and serve's data file lock are both taken here.
 *
 * The lock file (`PATH.lock`, lock-file.ts) names its owner (lock-record.ts): pid, host, start time and
 * boot id. It is taken atomically with its owner recorded, and broken only when its owner is gone, by one
 * breaker at a time: two processes can never both hold it.
 *
 * A lock file is found by its name, and what it guards may have other names: serve's data file can be
 * reached through a hard link in another directory or a bind mount. So serve (the `identityOf` option)
 * also claims, with the kernel, the file's identity (device and inode) and its directory entry
 * (lock-identity.ts): claims that vanish with their process, kill -9 and power cuts included, and take no
 * disk space. A process holding them is the only petinv on this machine using the file, so the lock file
 * then only guards against an older petinv or one on another host: an empty or torn lock file is stale at
 * once (a power cut left it), and one that cannot be written (a full disk) is no reason to refuse.
 */

export interface AcquireOptions extends LockOptions, IdentityOptions {
  /** How long to wait for another holder before giving up (LockHeldError); 0, the default: not at all. */
  waitMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

export interface HeldLock {
  /** Set when the lock file could not be written but the identity claims hold the lock: why. */
  readonly recordProblem: NodeJS.ErrnoException | undefined;
  /**
   * Claims the file's identity anew after it was created or replaced (a snapshot renamed into place).
   * A former identity is kept while another name (a hard link) still reaches it. Throws LockHeldError when
   * another process claims the new identity.
   */
  follow(): Promise<void>;
  release(): Promise<void>;
}

/**
 * Takes the lock at `lockPath`, waiting up to `waitMs` for another holder. Throws LockHeldError when it is
 * held, and file-system failures as they are, for the caller to put in its own words.
 */
export async function acquireLock(lockPath: string, options: AcquireOptions = {}): Promise<HeldLock> {
  const identities = options.identityOf
    ? await claimIdentities(options.identityOf, lockPath, options)
    : undefined;
  const follow = identities?.follow ?? (async () => {});
  const releaseClaims = async () => identities?.releaseAll();
  const lockOptions = { ...options, tornIsStale: options.tornIsStale ?? identities !== undefined };
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const started = Date.now();
  try {
    for (let round = 0; ; round++) {
      let attempt: LockAttempt;
      try {
        attempt = tryLock(lockPath, lockOptions);
      } catch (error) {
        if (!identities) throw error;
        // The claims hold the lock; the file only names the owner. One left by a serve that is gone must
        // not name it still (`kill $(head -1 FILE.lock)`): it goes, if it can.
        removeStaleLock(lockPath, options);
        return { recordProblem: error as NodeJS.ErrnoException, follow, release: releaseClaims };
      }
      if (attempt.acquired) {
        const { release } = attempt;
        const releaseBoth = async () => {
          release();
          await releaseClaims();
        };
        return { recordProblem: undefined, follow, release: releaseBoth };
      }
      if (Date.now() - started >= (options.waitMs ?? 0))
        throw new LockHeldError(lockPath, attempt.heldBy, 'file');
      // Short waits first: a holder keeps the lock for a few milliseconds.
      await sleep(Math.min(5 * 2 ** Math.min(round, 4), 50) * (0.5 + Math.random()));
    }
  } catch (error) {
    await releaseClaims();
    throw error;
  }
}

/** Runs `work` holding the lock at `lockPath`; the lock is released however `work` ends. */
export async function withLock<T>(
  lockPath: string,
  work: () => T | Promise<T>,
  options: AcquireOptions = {},
): Promise<T> {
  const lock = await acquireLock(lockPath, options);
  try {
    return await work();
  } finally {
    await lock.release();
  }
}
