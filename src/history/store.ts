import {
  closeSync,
  constants,
  fchmodSync,
  fdatasyncSync,
  fstatSync,
  openSync,
  readFileSync,
  readSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { basename, join } from 'node:path';
import { isStoreId } from '../contract/store-id';
import { writeFileAtomicSync } from '../files/atomic-write';
import { makeDirectories, quietly, READ_NO_FOLLOW, randomHex, withOpenFile } from '../files/file-system';
import { acquireLock, bootId, LockHeldError, processStartTime } from '../files/lock';
import { printable } from '../printable';
import { type HistoryChange, type HistoryRun, keptRuns, parseHistory, serialize } from './runs';

export type { HistoryChange, HistoryRun } from './runs';

/**
 * The local history of write runs, one JSON line a run, a file per service origin (or store), for `petinv
 * undo`. Whatever goes wrong with it is reported and never fails the write it records.
 */

/** The runs kept, and shown: the unfinished ones and the newest others (runs.ts, keptRuns). */
export const MAX_HISTORY_RUNS = 100;
/** Past this many runs, or this size, the file is rewritten with the runs kept in at most half this size. */
export const MAX_HISTORY_BYTES = 8 * 1024 * 1024;

export interface HistoryOptions {
  /** The state directory (`$XDG_STATE_HOME/petinv`); the history is in its `history` folder. */
  directory: string;
  baseUrl: string;
  /** The store the service said it serves, the history filed under it; null: by origin; undefined: linkedStore's. */
  storeId?: string | null;
  /** The terminal session this petinv runs in (session.ts), kept with each run. */
  session?: string;
  /** Told what went wrong with the history, once each, as a person should hear it. */
  warn: (message: string) => void;
}

export interface History {
  readonly file: string;
  /** The runs kept (keptRuns), oldest first; damaged lines are reported and left out. */
  read(): HistoryRun[];
  /** Records a run that wrote something; a failure is reported, never thrown. Resolves with the run, if kept. */
  record(run: Pick<HistoryRun, 'env' | 'command' | 'changes' | 'marks'>): Promise<HistoryRun | undefined>;
  /**
   * Records a run before its first write, with the changes it plans, marked `unfinished` (and synced to
   * disk): a petinv killed outright leaves that, and undo takes back what the run wrote. A failure is
   * reported, never thrown.
   */
  begin(run: Pick<HistoryRun, 'env' | 'command' | 'changes'>): Promise<RunJournal>;
}

/** A run recorded as it goes (History.begin); each line it adds has the run's id (runs.ts merges them). */
export interface RunJournal {
  /** Pets found holding other than planned, recorded with that before ahead of their write. */
  amend(changes: readonly HistoryChange[]): Promise<unknown>;
  /** The run's end: what it wrote replaces what it planned, and a run that wrote nothing is taken out. */
  finish(run: Pick<HistoryRun, 'changes' | 'marks'>): Promise<HistoryRun | undefined>;
}

/** A name for a service origin: readable, and distinct for every origin. */
function originName(baseUrl: string): string {
  const origin = URL.parse(baseUrl)?.origin ?? baseUrl;
  const readable = origin
    .replace(/^[a-z]+:\/\//, '')
    .replace(/[^A-Za-z0-9.-]+/g, '_')
    .slice(0, 80);
  // FNV-1a over the whole origin: two origins that read alike (a:b and a_b) still get two files.
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(origin)) hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
  return `${readable}-${hash.toString(16).padStart(8, '0')}`;
}

const runId = (at: Date) => `${at.toISOString().replace(/[-:]|\.\d+Z$/g, '')}-${randomHex(2)}`;

const { O_RDWR, O_APPEND, O_CREAT, O_NOFOLLOW, O_NONBLOCK } = constants;

const describe = (error: unknown) => (error as NodeJS.ErrnoException).code ?? (error as Error).message;

/** How long a run waits for another petinv's hold on the history (a few milliseconds each). */
const LOCK_WAIT_MS = 3000;

async function lockHistory(lockPath: string): Promise<() => Promise<void>> {
  const lock = await acquireLock(lockPath, { mode: 0o600, waitMs: LOCK_WAIT_MS }).catch((error: unknown) => {
    if (!(error instanceof LockHeldError)) throw error;
    const owner = error.heldBy ? `pid ${error.heldBy.pid}` : 'another process';
    throw new Error(`its lock ${lockPath} is held by ${owner}`);
  });
  return lock.release;
}

function endsTorn(descriptor: number): boolean {
  const size = fstatSync(descriptor).size;
  if (size === 0) return false;
  const last = Buffer.alloc(1);
  readSync(descriptor, last, 0, 1, size - 1);
  return last[0] !== 0x0a;
}

/** A file's text, never through a symlink and only a regular file; undefined when missing or unreadable. */
function readText(path: string, onError: (error: unknown) => void): string | undefined {
  try {
    // A FIFO would block the read (and a write run's record after its write) until a writer came, and a
    // link to /dev/zero is read until memory runs out.
    return withOpenFile(path, READ_NO_FOLLOW, (descriptor, stat) => {
      if (!stat.isFile()) throw new Error('not a regular file');
      return readFileSync(descriptor, 'utf8');
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') onError(error);
    return undefined;
  }
}

/** What the service at an origin last said of its store, beside the histories: its id, or that it said none. */
const linkPath = (folder: string, origin: string) => join(folder, `${origin}.store`);
const NO_STORE = 'none';

/** The store last recorded at `baseUrl`'s origin (null: none), for a history read without asking the service. */
export function linkedStore(directory: string, baseUrl: string): string | null | undefined {
  const text = readText(linkPath(join(directory, 'history'), originName(baseUrl)), () => {})?.trim();
  return isStoreId(text) ? text : text === undefined ? undefined : null;
}

export function openHistory(options: HistoryOptions): History {
  const folder = join(options.directory, 'history');
  const origin = originName(options.baseUrl);
  const link = linkPath(folder, origin);
  const storeId =
    options.storeId === undefined ? linkedStore(options.directory, options.baseUrl) : options.storeId;
  const file = join(folder, storeId ? `store-${storeId}.jsonl` : `${origin}.jsonl`);
  const where = `the history ${file}`;
  // What the service said, kept for a history read without asking it, which would show the older store (an
  // undo that found nothing here to take back once did). Quietly: only such a read needs it.
  const rememberStore = () => {
    if (options.storeId !== undefined && readText(link, () => {})?.trim() !== (storeId ?? NO_STORE))
      quietly(() => writeFileAtomicSync(link, `${storeId ?? NO_STORE}\n`, { mode: 0o600, fsync: false }));
  };
  rememberStore();
  const read = (): HistoryRun[] => {
    const text = readText(file, (error) => options.warn(`cannot read ${where}: ${describe(error)}`));
    if (text === undefined) return [];
    const damaged: number[] = [];
    const runs = parseHistory(text, (line) => damaged.push(line));
    if (damaged.length > 0)
      options.warn(
        `${where} has ${damaged.length === 1 ? 'a damaged line' : `${damaged.length} damaged lines`} (line ${damaged.slice(0, 5).join(', ')}${damaged.length > 5 ? ', …' : ''}), left out; the other runs are read`,
      );
    return keptRuns(runs, MAX_HISTORY_RUNS);
  };

  /** Rewrites the file with the runs that fit its bounds (keptRuns), written atomically (files/atomic-write.ts). */
  const compact = () => {
    const runs = parseHistory(readText(file, () => {}) ?? '', () => {});
    const kept = keptRuns(runs, MAX_HISTORY_RUNS, MAX_HISTORY_BYTES / 2);
    // A stock-take pushed out by colleagues' single runs (one account, one machine) is said as it goes.
    for (const run of runs)
      if (run.changes.length > 1 && !kept.includes(run))
        options.warn(
          `the history keeps its newest runs (${MAX_HISTORY_RUNS} at most, in ${MAX_HISTORY_BYTES / 2 ** 21} MiB): run ${run.id} (${run.command}, ${run.changes.length} pets) is dropped from it, and undo can no longer take it back`,
        );
    writeFileAtomicSync(file, kept.map(serialize).join(''), {
      mode: 0o600,
      temporaryName: (random) => `${basename(file)}.${random}.tmp`,
    });
  };

  /**
   * Appends a line under the history's lock; true when it landed, else a warning says `what` was not, and
   * `otherwise`. A run's start is synced to disk first (what the run is about to write survives a power cut
   * too); its end, or a lone run, then bounds the file, which reads it whole: not before or amid its writes.
   */
  const append = async (run: HistoryRun, what: string, otherwise: string, part?: 'start' | 'amendment') => {
    let release: (() => Promise<void>) | undefined;
    try {
      makeDirectories(folder, 0o700);
      // Two petinv runs at once each append, and one may rewrite the file: a lock keeps the other's
      // line from landing in the file being replaced.
      release = await lockHistory(`${file}.lock`);
      const descriptor = openSync(file, O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK, 0o600);
      let size: number;
      try {
        // A FIFO or a device there would block, or swallow, the run's line: not a history.
        if (!fstatSync(descriptor).isFile()) throw new Error('not a regular file');
        // A file made by hand, or by an older petinv, is made private too.
        fchmodSync(descriptor, 0o600);
        // A last line cut short (a full disk, a crash, an edit by hand) has no newline: this run starts a
        // line of its own, else it is glued to the damaged one and lost, and undo would take an older run.
        writeSync(descriptor, (endsTorn(descriptor) ? '\n' : '') + serialize(run));
        if (part === 'start') fdatasyncSync(descriptor);
        size = fstatSync(descriptor).size;
      } finally {
        closeSync(descriptor);
      }
      if (
        part === undefined &&
        (size > MAX_HISTORY_BYTES || readFileSync(file, 'latin1').split('\n').length > MAX_HISTORY_RUNS + 1)
      )
        compact();
      rememberStore();
      return true;
    } catch (error) {
      options.warn(`${what} was not recorded in ${where} (${describe(error)}); ${otherwise}`);
      return false;
    } finally {
      await release?.();
    }
  };

  const newRun = (
    { env, command, changes, marks = [] }: Pick<HistoryRun, 'env' | 'command' | 'changes' | 'marks'>,
    at = new Date(),
  ): HistoryRun => ({
    id: runId(at),
    at: at.toISOString(),
    env,
    service: options.baseUrl,
    command: printable(command, 200),
    changes: [...changes],
    ...(options.session && { session: options.session }),
    ...(marks.length > 0 && { marks: [...marks] }),
  });

  const undoWillNotKnow = 'petinv undo will not know it';

  return {
    file,
    read,
    async record(fields) {
      if (fields.changes.length === 0) return undefined;
      const run = newRun(fields);
      return (await append(run, 'this run', undoWillNotKnow)) ? run : undefined;
    },
    async begin(fields) {
      const by = { pid: process.pid, host: hostname(), start: processStartTime(process.pid), boot: bootId() };
      const started = { ...newRun({ ...fields, marks: ['unfinished'] }), by };
      const stoppedOutright = 'stopped outright, it would leave nothing for petinv undo';
      // Nothing planned is nothing to leave behind: only the end is recorded, if the run wrote anything.
      const landed =
        started.changes.length > 0 && (await append(started, "this run's start", stoppedOutright, 'start'));
      // Amendments that come while one is being written go together in the next line.
      const queued: HistoryChange[] = [];
      let written: Promise<unknown> = Promise.resolve();
      const writeQueued = () => {
        const changes = queued.splice(0);
        const what = 'pets found changed since the plan';
        const otherwise = 'stopped outright, undo would give them their planned before';
        return append({ ...started, changes }, what, otherwise, 'amendment');
      };
      return {
        amend(changes) {
          if (!landed || changes.length === 0) return written;
          if (queued.length === 0) written = written.then(writeQueued);
          queued.push(...changes);
          return written;
        },
        async finish({ changes, marks = [] }) {
          // Nothing written and nothing begun: nothing to record. Begun, an end with no changes takes it out.
          if (changes.length === 0 && !landed) return undefined;
          await written;
          const run = { ...newRun({ ...fields, changes, marks }), id: started.id, at: started.at };
          const kept = landed
            ? await append(run, "this run's end", 'it stays there as unfinished, with the pets it planned')
            : await append(run, 'this run', undoWillNotKnow);
          return kept && changes.length > 0 ? run : undefined;
        },
      };
    },
  };
}
