import { closeSync, constants, fstatSync, lstatSync, openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CREATE_EXCLUSIVE,
  type FileSystem,
  makeDirectories,
  nodeFileSystem,
  READ_NO_FOLLOW,
  randomHex,
  writeFully,
} from './file-system';
import { type Claim, claimAbstractName, entryIdentityName, hasAbstractSockets } from './lock-identity';
import {
  describeLockOwner,
  encodePath,
  isForeign,
  isTornRecord,
  type LockOwner,
  ownerIsRunning,
  parseOwner,
} from './lock-record';

export { bootId, describeLockOwner, isZombie, type LockOwner, processStartTime } from './lock-record';

/**
 * petinv's one lock module: the config file's lock and serve's data file lock are both taken here.
 *
 * The lock file (`PATH.lock`) names its owner (lock-record.ts): pid, host, start time, boot id.
 * - Taken atomically with its owner already recorded: written whole under a private name, then linked
 *   into place. There is no moment at which another process finds it empty.
 * - Broken only while holding a short-lived breaker lock (`LOCK.break`), and only if it is still the very
 *   lock found stale: same inode and same owner record (an inode number is handed to the next new file as
 *   soon as it is freed, so it alone is no identity). Only breakers remove another's lock, and a breaker
 *   runs alone, so a fresh lock taken meanwhile is never removed: two processes can never both hold it.
 *
 * A lock file is found by its name, and what it guards may have other names: serve's data file can be
 * reached through a hard link in another directory or a bind mount. So serve (the `identityOf` option)
 * also claims, with the kernel, the file's identity (device and inode) and its directory entry
 * (lock-identity.ts): claims that vanish with their process, kill -9 and power cuts included, and take no
 * disk space. A process holding them is the only petinv on this machine using the file, so the lock file
 * then only guards against an older petinv or one on another host: an empty or torn lock file is stale at
 * once (a power cut left it), and one that cannot be written (a full disk) is no reason to refuse.
 */

export interface LockOptions {
  files?: FileSystem;
  mode?: number;
  /**
   * A lock whose owner cannot be checked (another host, or a record without a pid) counts as abandoned
   * once it is this old; undefined: never.
   */
  abandonUncheckableAfterMs?: number;
  /** An empty or torn record is stale at once (the caller holds a claim no live new owner could lack). */
  tornIsStale?: boolean;
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

/** Whether the process that took the lock still runs: same host, pid, boot and start time. */
function ownerIsAlive(owner: LockOwner, lockPath: string, ageMs: number, options: LockOptions): boolean {
  if (isForeign(owner)) {
    const limit = options.abandonUncheckableAfterMs;
    return limit === undefined || ageMs < limit;
  }
  if (owner.pid === process.pid) return held.has(lockPath);
  return ownerIsRunning(owner);
}

interface FoundLock {
  owner: LockOwner | undefined;
  torn: boolean;
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
    return { owner: undefined, torn: true, identity: `${stat.ino} link`, ageMs: Date.now() - stat.mtimeMs };
  }
  try {
    const stat = fstatSync(fd);
    const record = readFileSync(fd, 'utf8');
    return {
      owner: parseOwner(record),
      torn: isTornRecord(record),
      identity: `${stat.ino} ${record}`,
      ageMs: Date.now() - stat.mtimeMs,
    };
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

/** Whether the lock found is stale: its owner gone, or (tornIsStale) its record never written whole. */
function isStale(found: FoundLock, lockPath: string, options: LockOptions): boolean {
  if (options.tornIsStale && found.torn) return true;
  if (!found.owner) return found.ageMs >= UNRECORDED_STALE_MS;
  return !ownerIsAlive(found.owner, lockPath, found.ageMs, options);
}

/**
 * Takes the lock file at `lockPath`, or says who holds it. A stale lock (its owner gone) is broken and
 * taken. File-system failures are thrown as they are, for the caller to put in its own words.
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
    if (!isStale(found, lockPath, options)) return { acquired: false, heldBy: found.owner };
    breakStaleLock(lockPath, found.identity, files);
  }
  return { acquired: false, heldBy: readLock(lockPath)?.owner };
}

/** Another process holds the lock (or one of serve's claims); `heldBy` names it when it could be told. */
export class LockHeldError extends Error {
  constructor(
    readonly lockPath: string,
    readonly heldBy: LockOwner | undefined,
    /** `file`: the lock file; `identity`: the kernel claim on the file reached by another name. */
    readonly via: 'file' | 'identity',
  ) {
    super(`${lockPath} is held${heldBy ? ` by pid ${heldBy.pid}` : ''}`);
  }
}

export interface AcquireOptions extends LockOptions {
  /** How long to wait for another holder before giving up (LockHeldError); 0, the default: not at all. */
  waitMs?: number;
  sleep?: (ms: number) => Promise<void>;
  /**
   * serve: also claim the identity of this file (its device and inode, however it is reached) and of its
   * directory entry, with the kernel. The lock file's record then becomes optional (see above).
   */
  identityOf?: string;
  /**
   * Where identity claims are kept as lock files on a platform without abstract sockets (not Linux, or
   * a sandbox that refuses them), or on Linux when a test asks for them; default: `petinv-locks-UID` in
   * the temporary directory.
   */
  identityDirectory?: string;
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

/** One identity claim, with the file kept open (when it is one) to tell when no name reaches it any more. */
interface IdentityClaim {
  claim: Claim;
  fd?: number;
}

/** Claims `name` with the kernel, or with a lock file in `directory` where there are no abstract sockets. */
/** Set once listening on an abstract name failed other than as taken (a sandbox that forbids it, say). */
let abstractSocketsRefused = false;

/**
 * The directory of identity lock files where there are no abstract sockets: one per user (on macOS the
 * temporary directory is per user already), private, and refused when someone else made it first.
 */
function identityDirectory(options: AcquireOptions): string {
  if (options.identityDirectory !== undefined) return options.identityDirectory;
  const directory = join(tmpdir(), `petinv-locks-${process.getuid?.() ?? 'user'}`);
  makeDirectories(directory, 0o700);
  const stat = lstatSync(directory);
  const owner = process.getuid?.();
  if (!stat.isDirectory() || (owner !== undefined && stat.uid !== owner) || (stat.mode & 0o022) !== 0)
    throw Object.assign(new Error(`${directory} is not a private directory of this user; remove it`), {
      code: 'EPERM',
    });
  return directory;
}

/** Claims `name` with the kernel, or with a lock file where there are no abstract sockets. */
async function claimName(name: string, options: AcquireOptions, lockPath: string): Promise<Claim> {
  if (hasAbstractSockets && !abstractSocketsRefused && options.identityDirectory === undefined) {
    const path = options.identityOf === undefined ? '' : encodePath(options.identityOf);
    try {
      const attempt = await claimAbstractName(name, `${describeLockOwner(process.pid)}${path}`);
      if (!attempt.claimed) throw new LockHeldError(lockPath, attempt.heldBy, 'identity');
      return attempt.claim;
    } catch (error) {
      if (error instanceof LockHeldError) throw error;
      abstractSocketsRefused = true;
    }
  }
  // Through the real file system: `files` stands for the data file's disk, and this is another one.
  const attempt = tryLock(join(identityDirectory(options), `${name.replaceAll('/', '_')}.lock`));
  if (!attempt.acquired) throw new LockHeldError(lockPath, attempt.heldBy, 'identity');
  return { name, release: async () => attempt.release() };
}

/** Opens `path` to claim its identity; undefined when there is no such file yet. */
function openIdentity(path: string): { fd: number; name: string } | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const stat = fstatSync(fd, { bigint: true });
  return { fd, name: `petinv/file/${stat.dev}:${stat.ino}` };
}

/** serve's kernel claims on the file at `path` (see the module's comment). */
async function claimIdentities(path: string, lockPath: string, options: AcquireOptions) {
  const claims: IdentityClaim[] = [];
  let released = false;
  /** Follows run one at a time, and a release waits for the one under way. */
  let following: Promise<void> = Promise.resolve();
  const releaseAll = async () => {
    released = true;
    await following.catch(() => {});
    for (const { claim, fd } of claims.splice(0).reverse()) {
      await claim.release();
      if (fd !== undefined) closeSync(fd);
    }
  };
  const followNow = async () => {
    const opened = released ? undefined : openIdentity(path);
    if (!opened) return;
    if (claims.some(({ claim }) => claim.name === opened.name)) {
      closeSync(opened.fd);
      return;
    }
    try {
      claims.push({ claim: await claimName(opened.name, options, lockPath), fd: opened.fd });
    } catch (error) {
      closeSync(opened.fd);
      throw error;
    }
    // A former identity no name reaches any more is freed (its inode number goes to the next new file).
    for (const former of claims.slice(0, -1))
      if (former.fd !== undefined && fstatSync(former.fd).nlink === 0) {
        claims.splice(claims.indexOf(former), 1);
        await former.claim.release();
        closeSync(former.fd);
      }
  };
  const follow = () => {
    following = following.catch(() => {}).then(followNow);
    return following;
  };
  try {
    claims.push({ claim: await claimName(entryIdentityName(path), options, lockPath) });
    await follow();
  } catch (error) {
    await releaseAll();
    throw error;
  }
  return { follow, releaseAll };
}

/**
 * Takes the lock at `lockPath`, waiting up to `waitMs` for another holder. Throws LockHeldError when it is
 * held, and file-system failures as they are, for the caller to put in its own words.
 */
export async function acquireLock(lockPath: string, options: AcquireOptions = {}): Promise<HeldLock> {
  const identities = options.identityOf
    ? await claimIdentities(options.identityOf, lockPath, options)
    : undefined;
  const waitMs = options.waitMs ?? 0;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const started = Date.now();
  try {
    for (let round = 0; ; round++) {
      let attempt: LockAttempt;
      try {
        attempt = tryLock(lockPath, {
          ...options,
          tornIsStale: options.tornIsStale ?? identities !== undefined,
        });
      } catch (error) {
        if (!identities) throw error;
        // The claims hold the lock; the file only names the owner. One left by a serve that is gone must
        // not name it still (`kill $(head -1 FILE.lock)`): it goes, if it can.
        const found = readLockQuietly(lockPath);
        if (found && isStale(found, lockPath, { ...options, tornIsStale: true }))
          unlinkQuietly(options.files ?? nodeFileSystem, lockPath);
        return {
          recordProblem: error as NodeJS.ErrnoException,
          follow: identities.follow,
          release: identities.releaseAll,
        };
      }
      if (attempt.acquired) {
        const { release } = attempt;
        return {
          recordProblem: undefined,
          follow: identities?.follow ?? (async () => {}),
          release: async () => {
            release();
            await identities?.releaseAll();
          },
        };
      }
      if (Date.now() - started >= waitMs) throw new LockHeldError(lockPath, attempt.heldBy, 'file');
      // Short waits first: a holder keeps the lock for a few milliseconds.
      await sleep(Math.min(5 * 2 ** Math.min(round, 4), 50) * (0.5 + Math.random()));
    }
  } catch (error) {
    await identities?.releaseAll();
    throw error;
  }
}

function readLockQuietly(lockPath: string): FoundLock | undefined {
  try {
    return readLock(lockPath);
  } catch {
    return undefined;
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
