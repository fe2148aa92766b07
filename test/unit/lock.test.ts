import { spawn } from 'node:child_process';
import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { describeLockOwner, isZombie, tryLock } from '../../src/files/lock';
import { FaultyFiles } from '../helpers/faulty-files';
import { temporaryDirectory } from '../helpers/serve';

const children: ReturnType<typeof spawn>[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill();
});

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
