import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { tryOr } from './file-system';

/**
 * The owner record a lock holds (lock.ts): the pid on the first line (for `kill $(head -1 FILE.lock)`),
 * then the host, start time and boot id, so that a pid reused after a crash is still seen to be stale.
 */

export interface LockOwner {
  pid: number;
  host?: string;
  start?: string;
  boot?: string;
  /** The file the owner claimed, as it named it (serve's identity claims say it: lock.ts). */
  path?: string;
}

/** Undefined when not on Linux, or when the process is gone. */
const readProc = (path: string) => tryOr(() => readFileSync(path, 'utf8'), undefined);

/** The fields of /proc/PID/stat from the third on (the state, ...); undefined where there is no /proc. */
export function procStat(pid: number | 'self'): string[] | undefined {
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

/** Whether a record is incomplete: empty, with no final newline, or with zeros a power cut left. */
export function isTornRecord(text: string): boolean {
  return text === '' || !text.endsWith('\n') || text.includes('\0');
}

export function parseOwner(text: string): LockOwner | undefined {
  const [first, ...rest] = text.split('\n');
  const pid = Number(first);
  if (!Number.isSafeInteger(pid) || pid <= 0) return undefined;
  const field = (name: string) => rest.find((line) => line.startsWith(`${name}=`))?.slice(name.length + 1);
  // An older petinv wrote the host alone on the second line.
  const host = field('host') ?? (rest[0] && !rest[0].includes('=') ? rest[0] : undefined);
  const path = field('path');
  return {
    pid,
    host,
    start: field('start'),
    boot: field('boot'),
    ...(path ? { path: decodePath(path) } : {}),
  };
}

/** A path in a record: JSON, so that no newline in a file's name can end the record early. */
export const encodePath = (path: string) => `path=${JSON.stringify(path)}\n`;

function decodePath(text: string): string | undefined {
  const path: unknown = tryOr(() => JSON.parse(text), undefined);
  return typeof path === 'string' ? path : undefined;
}

/** Whether `pid` runs, a zombie aside; another user's (EPERM) runs, but counts only with `othersCount`. */
export function isRunning(pid: number, othersCount = true): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if (!othersCount || (error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  return !isZombie(pid);
}

/** Whether the running `owner.pid` is still the process that wrote `owner`: same boot, same start time. */
export function isSameProcess(owner: LockOwner): boolean {
  const boot = bootId();
  if (owner.boot && boot && owner.boot !== boot) return false;
  const start = processStartTime(owner.pid);
  return !(owner.start && start && owner.start !== start);
}

/**
 * Whether the process that wrote `owner` (on this host) still runs: same pid, boot and start time. A
 * record without a start time, from an older petinv, counts only while its pid is a petinv still.
 */
export function ownerIsRunning(owner: LockOwner): boolean {
  if (!isRunning(owner.pid) || !isSameProcess(owner)) return false;
  if (owner.start || processStartTime(owner.pid) === undefined) return true;
  return (readProc(`/proc/${owner.pid}/cmdline`) ?? '').includes('petinv');
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
