import { spawn } from 'node:child_process';
import { existsSync, linkSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { acquireLock, describeLockOwner, type HeldLock, LockHeldError, tryLock } from '../../src/files/lock';
import { isZombie } from '../../src/files/lock-record';
import { FaultyFiles } from '../helpers/faulty-files';
import { spawnServer, temporaryDirectory } from '../helpers/serve';

const children: ReturnType<typeof spawn>[] = [];
const locks: HeldLock[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) child.kill();
  await Promise.all(locks.splice(0).map((lock) => lock.release()));
});

/** acquireLock, released after the test whatever happens. */
async function acquire(...args: Parameters<typeof acquireLock>): Promise<HeldLock> {
  const lock = await acquireLock(...args);
  locks.push(lock);
  return lock;
}

/** The LockHeldError an acquisition is refused with. */
async function refusal(...args: Parameters<typeof acquireLock>): Promise<LockHeldError> {
  const error = await acquire(...args).then(
    () => new Error('the lock was taken twice'),
    (caught: unknown) => caught,
  );
  if (!(error instanceof LockHeldError)) throw error;
  return error;
}

/** A data file in a directory of its own, and the lock path serve gives it. */
function dataFile(name = 'inventory.json') {
  const directory = temporaryDirectory();
  const path = join(directory, name);
  writeFileSync(path, '[]');
  return { directory, path, lockPath: `${path}.lock` };
}

function liveProcess(): number {
  const child = spawn('sleep', ['30'], { stdio: 'ignore' });
  children.push(child);
  return child.pid ?? 0;
}

/**
 * A process that has exited but is not yet collected by its parent: the shell starts `sleep 1`, then
 * becomes `sleep 30`, which never waits for it. (A child quick enough to exit before the exec would be
 * collected by the shell.)
 */
async function zombiePid(): Promise<number> {
  const parent = spawn('sh', ['-c', 'sleep 1 & echo $!; exec sleep 30'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  children.push(parent);
  const pid = Number(
    await new Promise<string>((resolve) => parent.stdout?.once('data', (data) => resolve(String(data)))),
  );
  for (let wait = 0; !isZombie(pid) && wait < 300; wait++)
    await new Promise((resolve) => setTimeout(resolve, 10));
  return pid;
}

async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => child.on('exit', resolve));
  return child.pid ?? 0;
}

describe('tryLock', () => {
  it('never breaks a live lock that replaced a stale one while it looked', async () => {
    const lockPath = join(temporaryDirectory(), 'thing.lock');
    writeFileSync(lockPath, describeLockOwner(await deadPid()));
    const liveRecord = describeLockOwner(liveProcess());
    const files = new FaultyFiles();
    // The moment the breaker starts, the stale lock's owner is replaced: the stale lock is released and
    // a live process takes the lock, as happens when many short commands queue for it.
    files.beforeOpen = (path) => {
      if (!path.endsWith('.break')) return;
      files.beforeOpen = undefined;
      unlinkSync(lockPath);
      writeFileSync(lockPath, liveRecord);
    };
    const attempt = tryLock(lockPath, { files });
    expect(attempt.acquired).toBe(false);
    expect(readFileSync(lockPath, 'utf8')).toBe(liveRecord);
  });

  it('takes a stale lock, and releases only its own', async () => {
    const lockPath = join(temporaryDirectory(), 'thing.lock');
    writeFileSync(lockPath, describeLockOwner(await deadPid()));
    const attempt = tryLock(lockPath);
    if (!attempt.acquired) throw new Error('a stale lock was not taken');
    expect(readFileSync(lockPath, 'utf8')).toBe(describeLockOwner(process.pid));
    expect(tryLock(lockPath)).toEqual({ acquired: false, heldBy: { pid: process.pid } });
    // Someone removed our lock by hand and another took it: releasing ours must leave theirs alone.
    const theirs = describeLockOwner(liveProcess());
    unlinkSync(lockPath);
    writeFileSync(lockPath, theirs);
    attempt.release();
    expect(readFileSync(lockPath, 'utf8')).toBe(theirs);
  });

  it('takes a lock whose owner was killed and waits only for its parent to collect it (a zombie)', async () => {
    const zombie = await zombiePid();
    expect(isZombie(zombie)).toBe(true);
    expect(isZombie(process.pid)).toBe(false);
    const lockPath = join(temporaryDirectory(), 'thing.lock');
    writeFileSync(lockPath, describeLockOwner(zombie));
    const attempt = tryLock(lockPath);
    expect(attempt.acquired).toBe(true);
    if (attempt.acquired) attempt.release();
  });

  it('waits out a lock that names no owner yet, then treats it as abandoned', () => {
    const lockPath = join(temporaryDirectory(), 'thing.lock');
    writeFileSync(lockPath, '');
    expect(tryLock(lockPath)).toEqual({ acquired: false, heldBy: undefined });
  });
});

describe('acquireLock', () => {
  it('waits for a holder up to waitMs, then names it', async () => {
    const lockPath = join(temporaryDirectory(), 'thing.lock');
    const order: string[] = [];
    const holder = await acquireLock(lockPath);
    const waiter = acquireLock(lockPath, { waitMs: 10_000 }).then((lock) => {
      order.push('second');
      return lock;
    });
    const impatient = await refusal(lockPath, { waitMs: 0 });
    expect(impatient).toMatchObject({ lockPath, via: 'file', heldBy: { pid: process.pid } });
    order.push('first released');
    await holder.release();
    await (await waiter).release();
    expect(order).toEqual(['first released', 'second']);
    expect(existsSync(lockPath)).toBe(false);
  });
});

describe.each([
  ['kernel claims', undefined],
  ['identity lock files', 'files'],
] as const)("serve's identity claims (%s)", (_name, mode) => {
  const identity = (path: string) => ({
    identityOf: path,
    identityDirectory: mode === 'files' ? temporaryDirectory() : undefined,
  });
  let shared: string | undefined;
  /** Both starts of a test must share the identity directory, as processes on one machine share /tmp. */
  const options = (path: string) => {
    const chosen = identity(path);
    shared ??= chosen.identityDirectory;
    return { ...chosen, identityDirectory: mode === 'files' ? shared : undefined };
  };
  afterEach(() => {
    shared = undefined;
  });

  it('refuses the same file reached through a hard link in another directory', async () => {
    const first = dataFile();
    const elsewhere = join(temporaryDirectory(), 'other-name.json');
    linkSync(first.path, elsewhere);
    await acquire(first.lockPath, options(first.path));
    const refused = await refusal(`${elsewhere}.lock`, options(elsewhere));
    expect(refused).toMatchObject({ via: 'identity', heldBy: { pid: process.pid } });
    // The other name's own lock file was never taken.
    expect(existsSync(`${elsewhere}.lock`)).toBe(false);
  });

  it('refuses the same name before the file exists, and frees everything on release', async () => {
    const directory = temporaryDirectory();
    const path = join(directory, 'new.json');
    const lock = await acquire(`${path}.lock`, options(path));
    expect((await refusal(`${path}.lock`, options(path))).via).toBe('identity');
    writeFileSync(path, '[]');
    await lock.follow();
    const link = join(temporaryDirectory(), 'link.json');
    linkSync(path, link);
    expect((await refusal(`${link}.lock`, options(link))).via).toBe('identity');
    await lock.release();
    await acquire(`${link}.lock`, options(link));
  });

  it('follows the file to each new identity, and keeps a former one only while a hard link reaches it', async () => {
    const { directory, path, lockPath } = dataFile();
    const kept = join(temporaryDirectory(), 'kept-link.json');
    linkSync(path, kept);
    const lock = await acquire(lockPath, options(path));
    // A snapshot: a new file renamed over the data file.
    const replace = () => {
      const next = join(directory, '.next.tmp');
      writeFileSync(next, '[]');
      renameSync(next, path);
    };
    replace();
    await lock.follow();
    const newLink = join(temporaryDirectory(), 'new-link.json');
    linkSync(path, newLink);
    expect((await refusal(`${newLink}.lock`, options(newLink))).via).toBe('identity');
    // The former data file, still reached by `kept`, is still claimed: it was this lock's file.
    expect((await refusal(`${kept}.lock`, options(kept))).via).toBe('identity');
    // Once no name reaches the second identity, it is freed at the next follow; `newLink` still reaches it.
    unlinkSync(newLink);
    replace();
    await lock.follow();
    const third = join(temporaryDirectory(), 'third-link.json');
    linkSync(path, third);
    expect((await refusal(`${third}.lock`, options(third))).via).toBe('identity');
  });

  it('takes at once a lock file a power cut left empty or torn', async () => {
    for (const left of ['', '\0\0\0\0\0\0\0\0', '12345\nhost=', `${process.pid}\nhost=x\0\0\0`]) {
      const { path, lockPath } = dataFile();
      writeFileSync(lockPath, left);
      const lock = await acquire(lockPath, options(path));
      expect(readFileSync(lockPath, 'utf8')).toBe(describeLockOwner(process.pid));
      await lock.release();
    }
  });

  it('takes at once a stale lock a serve killed while breaking it left, with its breaker', async () => {
    const { path, lockPath } = dataFile();
    writeFileSync(lockPath, describeLockOwner(await deadPid()));
    writeFileSync(`${lockPath}.break`, '');
    await acquire(lockPath, options(path));
    expect(readFileSync(lockPath, 'utf8')).toBe(describeLockOwner(process.pid));
    expect(existsSync(`${lockPath}.break`)).toBe(false);
  });

  it('still refuses a live owner named in the lock file (an older petinv holds it)', async () => {
    const { path, lockPath } = dataFile();
    const live = liveProcess();
    writeFileSync(lockPath, describeLockOwner(live));
    expect(await refusal(lockPath, options(path))).toMatchObject({ via: 'file', heldBy: { pid: live } });
    // The claims were given back: the file can be locked once that owner is gone.
    unlinkSync(lockPath);
    await acquire(lockPath, options(path));
  });

  it('holds without a lock file it cannot write (a full disk), and removes a stale one naming a dead pid', async () => {
    const { path, lockPath } = dataFile();
    writeFileSync(lockPath, describeLockOwner(await deadPid()));
    const files = new FaultyFiles();
    files.spaceLeft = 0;
    const lock = await acquire(lockPath, { ...options(path), files });
    expect(lock.recordProblem?.code).toBe('ENOSPC');
    expect(existsSync(lockPath)).toBe(false);
    const link = join(temporaryDirectory(), 'link.json');
    linkSync(path, link);
    expect((await refusal(`${link}.lock`, options(link))).via).toBe('identity');
  });
});

describe('kernel claims', () => {
  it('vanish with a process killed with SIGKILL, and name their holder while it runs', async () => {
    const { path, lockPath } = dataFile();
    // A serve is the process that holds them: the built bin, as an operator runs it.
    const holder = await spawnServer(['--data', path, '--api-key', 'lock-test-key', '--quiet']);
    children.push(holder.child);
    const link = join(temporaryDirectory(), 'link.json');
    linkSync(path, link);
    expect(await refusal(`${link}.lock`, { identityOf: link })).toMatchObject({
      via: 'identity',
      heldBy: { pid: holder.child.pid, path },
    });
    holder.child.kill('SIGKILL');
    await holder.exited;
    // Its lock file is left behind, naming a dead pid; its kernel claims went with it.
    expect(readFileSync(lockPath, 'utf8').split('\n')[0]).toBe(String(holder.child.pid));
    await acquire(`${link}.lock`, { identityOf: link });
    await acquire(lockPath, { identityOf: join(temporaryDirectory(), 'other.json') });
  });
});
