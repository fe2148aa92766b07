import { chmodSync, lstatSync, readdirSync, readFileSync, type Stats, unlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import * as z from 'zod/mini';
import { writeFileAtomicSync } from '../files/atomic-write';
import {
  makeDirectories,
  octalMode,
  quietly,
  READ_NO_FOLLOW,
  randomHex,
  tryOr,
  withOpenFile,
} from '../files/file-system';
import { bootId, isRunning, isSameProcess, processStartTime } from '../files/lock';
import { serveRecordDirectory } from './paths';
import { baseUrlProblem, isLoopbackHost, type RunningServe } from './settings';

/**
 * How `petinv --env local` finds a running `petinv serve` on any port: the record each keeps while it runs,
 * trusted only as docs/serve.md says: the user's own and private, loopback, its process still running.
 */

/** Built when a record is read: most commands never look for a running serve. */
function serveRecordSchema() {
  return z.object({
    version: z.literal(1),
    pid: z.int().check(z.positive()),
    host: z.string(),
    boot: z.optional(z.string()),
    start: z.optional(z.string()),
    baseUrl: z.string(),
    apiKey: z.string().check(z.minLength(1)),
    dataFile: z.nullable(z.string()),
    readOnly: z.boolean(),
    startedAt: z.string(),
  });
}

export type ServeRecord = z.output<ReturnType<typeof serveRecordSchema>>;

/** What a serve tells about itself; the rest (pid, host, boot, start time) is the process's own. */
export type ServeAnnouncement = Pick<ServeRecord, 'baseUrl' | 'apiKey' | 'dataFile' | 'readOnly'>;

export interface ServeLookup {
  serve?: ServeRecord;
  /** Why records or the directory were not trusted; stale records are not listed. */
  ignored: string[];
}

const RECORD_NAME = /^serve-\d+-[0-9a-f]{8}\.json$/;
/** A record is a few hundred bytes; anything far larger is not one of ours. */
const RECORD_LIMIT = 64 * 1024;

/** Why a directory or record is not the user's own and private, or undefined when it is. */
function privacyProblem(stat: Stats, what: string): string | undefined {
  const uid = process.getuid?.();
  if (uid === undefined) return undefined; // Windows: no POSIX owners or modes.
  if (stat.uid !== uid) return `${what} belongs to uid ${stat.uid}, not to you (uid ${uid})`;
  if ((stat.mode & 0o077) !== 0) return `${what} is open to other users (mode ${octalMode(stat.mode)})`;
  return undefined;
}

/** The client's address of a serve listening on `host`: the unspecified addresses are reached on loopback. */
export function loopbackBaseUrl(host: string, port: number, path: string): string | undefined {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  if (bare === '0.0.0.0') return `http://127.0.0.1:${port}${path}`;
  if (bare === '::' || bare === '0:0:0:0:0:0:0:0') return `http://[::1]:${port}${path}`;
  const url = new URL(`http://${bare.includes(':') ? `[${bare}]` : bare}:${port}${path}`);
  return isLoopbackHost(url.hostname) ? url.href.replace(/\/$/, '') : undefined;
}

/** Whether the process that wrote the record still runs: same host, pid, boot and start time. */
function stillRunning(record: ServeRecord): boolean {
  if (record.host !== hostname()) return false;
  // Another user's pid (EPERM) is not the serve that wrote this; a zombie was killed (kill -9 leaves its record).
  if (record.pid !== process.pid && !isRunning(record.pid, false)) return false;
  return isSameProcess(record);
}

/** The directory, checked: absent (undefined), or trusted, or a reason it is not. */
function checkDirectory(directory: string): { exists: boolean; problem?: string } {
  let stat: Stats;
  try {
    // lstat: a symlink planted at the directory's name could lead anywhere, so it is never followed.
    stat = lstatSync(directory);
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { exists: false };
    return { exists: true, problem: `cannot read ${directory} (${code ?? (error as Error).message})` };
  }
  if (stat.isSymbolicLink()) return { exists: true, problem: `${directory} is a symbolic link` };
  if (!stat.isDirectory()) return { exists: true, problem: `${directory} is not a directory` };
  return { exists: true, problem: privacyProblem(stat, directory) };
}

/** Reads one record, never through a symlink; a reason when it cannot be trusted. */
function readRecord(path: string): { record?: ServeRecord; problem?: string } {
  let text: string | { problem: string };
  try {
    text = withOpenFile(path, READ_NO_FOLLOW, (fd, stat) => {
      if (!stat.isFile()) return { problem: `${path} is not a regular file` };
      const problem = privacyProblem(stat, path);
      if (problem) return { problem };
      if (stat.size > RECORD_LIMIT) return { problem: `${path} is too large to be a serve record` };
      return readFileSync(fd, 'utf8');
    });
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    if (code === 'ENOENT') return {}; // Removed meanwhile: its serve stopped.
    if (code === 'ELOOP') return { problem: `${path} is a symbolic link` };
    return { problem: `cannot read ${path} (${code ?? (error as Error).message})` };
  }
  if (typeof text !== 'string') return text;
  // JSON.parse never returns undefined: undefined is text that is not JSON.
  const raw: unknown = tryOr(() => JSON.parse(text), undefined);
  if (raw === undefined) return { problem: `${path} is not JSON` };
  const record = serveRecordSchema().safeParse(raw).data;
  if (!record || !Number.isFinite(Date.parse(record.startedAt)))
    return { problem: `${path} is not a serve record` };
  const url = record.baseUrl;
  // The record's key is sent to its address: only to one that never leaves this machine.
  if (baseUrlProblem(url) || !url.startsWith('http://') || !isLoopbackHost(new URL(url).hostname))
    return { problem: `${path} names an address that is not an http loopback address` };
  return { record };
}

/** The serve `petinv --env local` uses: the most recently started one still running, if any. */
export function findRunningServe(env: NodeJS.ProcessEnv): ServeLookup {
  const directory = serveRecordDirectory(env);
  const lookup: ServeLookup = { ignored: [] };
  const checked = checkDirectory(directory);
  if (checked.problem) lookup.ignored.push(checked.problem);
  if (!checked.exists || checked.problem) return lookup;
  let names: string[];
  try {
    names = readdirSync(directory);
  } catch (error) {
    lookup.ignored.push(`cannot list ${directory} (${(error as NodeJS.ErrnoException).code})`);
    return lookup;
  }
  for (const name of names) {
    if (!RECORD_NAME.test(name)) continue;
    const { record, problem } = readRecord(join(directory, name));
    if (problem) lookup.ignored.push(problem);
    if (!record || !stillRunning(record)) continue;
    if (!lookup.serve || Date.parse(record.startedAt) >= Date.parse(lookup.serve.startedAt))
      lookup.serve = record;
  }
  return lookup;
}

/** Creates the records directory, the user's own and private, or says why it cannot be used. */
function prepareDirectory(directory: string): void {
  makeDirectories(directory, 0o700);
  const stat = lstatSync(directory);
  if (stat.isSymbolicLink()) throw new Error(`${directory} is a symbolic link`);
  if (!stat.isDirectory()) throw new Error(`${directory} is not a directory`);
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid)
    throw new Error(`${directory} belongs to uid ${stat.uid}, not to you (uid ${uid})`);
  // Ours: made private if it was not (a umask or an older tool may have left it open).
  if ((stat.mode & 0o077) !== 0) chmodSync(directory, 0o700);
}

/** Removes records of this user's serves that died without removing their own (kill -9, a crash). */
function pruneStaleRecords(directory: string): void {
  for (const name of readdirSync(directory)) {
    if (!RECORD_NAME.test(name)) continue;
    const path = join(directory, name);
    const { record } = readRecord(path);
    // Only records this host can judge: another host's serve may be alive (a shared home directory).
    if (record && record.host === hostname() && !stillRunning(record)) quietly(() => unlinkSync(path));
  }
}

export interface ServeRegistration {
  path: string;
  /** Removes the record; safe to call more than once. */
  unregister(): void;
}

/** Writes this serve's record atomically (files/atomic-write.ts): a reader finds none or a complete one. */
export function registerServe(announcement: ServeAnnouncement, env: NodeJS.ProcessEnv): ServeRegistration {
  const directory = serveRecordDirectory(env);
  prepareDirectory(directory);
  pruneStaleRecords(directory);
  const record: ServeRecord = {
    version: 1,
    pid: process.pid,
    host: hostname(),
    boot: bootId(),
    start: processStartTime(process.pid),
    ...announcement,
    startedAt: new Date().toISOString(),
  };
  const name = `serve-${process.pid}-${randomHex(4)}`;
  const path = join(directory, `${name}.json`);
  writeFileAtomicSync(path, `${JSON.stringify(record)}\n`, {
    mode: 0o600,
    temporaryName: () => `.${name}.tmp`,
    fsync: true,
  });
  return {
    path,
    // Perhaps gone already (unregistered before, or a logout cleared XDG_RUNTIME_DIR).
    unregister: () => quietly(() => unlinkSync(path)),
  };
}

/** The running serve `local` points at, as resolveSettings takes it, in one line for config and status. */
export function findServeForLocal(env: NodeJS.ProcessEnv): RunningServe | undefined {
  const { serve } = findRunningServe(env);
  if (serve === undefined) return undefined;
  const data = serve.dataFile === null ? 'in memory' : `data ${serve.dataFile}`;
  const description = `petinv serve pid ${serve.pid}, ${data}, started ${serve.startedAt}`;
  return { baseUrl: serve.baseUrl, apiKey: serve.apiKey, description };
}
