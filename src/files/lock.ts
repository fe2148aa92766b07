import { type LockAttempt, type LockOptions, removeStaleLock, tryLock } from './lock-file';
import { claimIdentities, type IdentityOptions } from './lock-identity';
import { LockHeldError } from './lock-record';

export { keepLockFile, putBackLockFile, tryLock } from './lock-file';
export {
  bootId,
  describeLockOwner,
  isRunning,
  isSameProcess,
  LockHeldError,
  ownerIsRunning,
  processStartTime,
} from './lock-record';

/**
 * petinv's one lock module, as docs/serve-operations.md describes it for contributors. Holding serve's
 * kernel claims (`identityOf`, lock-identity.ts), the lock file only guards against an older petinv or
 * another host, so a torn one is stale at once and one that cannot be written (a full disk) refuses nothing.
 */

export interface AcquireOptions extends LockOptions, IdentityOptions {
  /** How long to wait for another holder before giving up (LockHeldError); 0, the default: not at all. */
  waitMs?: number;
}

export interface HeldLock {
  /** Set when the lock file could not be written but the identity claims hold the lock: why. */
  readonly recordProblem: NodeJS.ErrnoException | undefined;
  /**
   * Claims the file's identity anew after it was created or replaced (a snapshot renamed into place),
   * keeping a former one that a hard link still reaches; LockHeldError when another process has it.
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
        const release = async () => {
          attempt.release();
          await releaseClaims();
        };
        return { recordProblem: undefined, follow, release };
      }
      if (Date.now() - started >= (options.waitMs ?? 0))
        throw new LockHeldError(lockPath, attempt.heldBy, 'file');
      // Short waits first: a holder keeps the lock for a few milliseconds.
      const wait = Math.min(5 * 2 ** Math.min(round, 4), 50) * (0.5 + Math.random());
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  } catch (error) {
    await releaseClaims();
    throw error;
  }
}
