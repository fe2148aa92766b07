import { existsSync, lstatSync, readFileSync, statSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { DEFAULT_BASE_URL, DEFAULT_SERVE_HOST, DEFAULT_SERVE_PORT } from '../contract/defaults';
import { describeFileSystemError, type FileSystem } from '../files/file-system';
import { acquireLock, type HeldLock, keepLockFile, LockHeldError, putBackLockFile } from '../files/lock';
import { type AppOptions, createInventoryApp, type FaultOptions } from './app';
import { InventoryFile } from './data-file';
import type { DataFileFormat } from './data-format';
import {
  commitsText,
  createDataDirectory,
  readInventoryFile,
  resolveDataPath,
  updatesText,
} from './data-load';
import { DEFAULT_SEED_COUNT } from './defaults';
import { ServeError } from './errors';
import { createHttpEdge, type HttpEdge, type HttpEdgeOptions } from './http-server';
import { JOURNAL_HEADER } from './journal-format';
import type { JournalReport } from './journal-open';
import { API_PREFIX } from './routes';
import { InventoryStore, seedInventory } from './store';

export interface ServeOptions extends FaultOptions {
  host?: string;
  /** Headers must arrive within this many ms of a request's first byte (default 10000). */
  headersTimeout?: HttpEdgeOptions['headersTimeout'];
  /** The whole request, body included, within this many ms (default 30000). */
  requestTimeout?: HttpEdgeOptions['requestTimeout'];
  /** Open connections past which new ones are closed at once (default 1024). */
  maxConnections?: HttpEdgeOptions['maxConnections'];
  /** Open connections of one client (an address, an IPv6 /64) past which its new ones are closed (default 256). */
  maxConnectionsPerClient?: HttpEdgeOptions['maxConnectionsPerClient'];
  port?: number;
  /** The data file; undefined keeps the inventory in memory only. */
  dataFile?: string;
  /** With a data file: load it, and never write it (a fixture that stays pristine). */
  inMemory?: boolean;
  /**
   * A journal damaged where no crash explains it: start from everything sound before the damage, and move
   * the journal aside (never removed). Without it, such a start is refused and every file left as it is.
   */
  recover?: boolean;
  /** The file layer the data file is written through; tests inject faults here. */
  files?: FileSystem;
  /** How many sample pets a new inventory gets. */
  seed?: number;
  apiKeys: readonly string[];
  log?: AppOptions['log'];
}

export interface RunningServer {
  /** The base address with the version segment, e.g. http://127.0.0.1:4010/v1. */
  baseUrl: string;
  host: string;
  port: number;
  /** The data file, resolved to the real file behind any symlink. */
  dataFile: string | undefined;
  /** True when the data file is loaded but never written. */
  readOnly: boolean;
  /** `array` when the data file is a plain JSON array, rewritten in serve's format at its first save. */
  dataFormat: DataFileFormat | undefined;
  /** True when the data file was created (and seeded) by this start. */
  seeded: boolean;
  /** Bytes of a torn last journal commit (a write a crash cut short, never acknowledged) cut at start. */
  droppedJournalBytes: number;
  /** What the operator should know of the start, beyond the readiness line. */
  warnings: string[];
  /** What the start did to the journal it found: a torn commit kept aside, an old one folded, a recovery. */
  journal: JournalReport;
  pets: number;
  server: Server;
  /** Stops accepting, lets requests in flight finish, flushes and unlocks the data file. */
  close(graceMs?: number): Promise<void>;
}

/**
 * Claims the data file at `path` (already resolved to the real file) for this process: `FILE.lock` names
 * the owner, and the file's identity is claimed too, so that a serve reaching it by another name (a hard
 * link in any directory, a bind mount) is refused as well (files/lock.ts). A lock left by a serve that
 * died is taken over, even when its pid now belongs to another process; one held by a live serve refuses
 * the start.
 */
export async function lockDataFile(path: string, files?: FileSystem): Promise<HeldLock> {
  const lockPath = `${path}.lock`;
  try {
    return await acquireLock(lockPath, { files, identityOf: path });
  } catch (error) {
    if (!(error instanceof LockHeldError))
      throw new ServeError(`cannot lock data file ${path} (${lockPath}): ${describeFileSystemError(error)}`);
    const holder = error.heldBy;
    if (holder?.host && holder.host !== hostname()) {
      // Its liveness cannot be checked from here; a container restarted under a new host name looks the same.
      throw new ServeError(
        `data file ${path} is in use by another petinv serve (pid ${holder.pid} on host ${holder.host}); stop it, or, if that serve is gone, remove ${lockPath}`,
      );
    }
    const owner = holder ? ` (pid ${holder.pid})` : ' (it did not say its pid in time)';
    // The same file by another name: a hard link, a bind mount (the holder says which name it uses).
    const byAnotherName =
      error.via === 'identity' && holder?.path && holder.path !== path
        ? `, which reaches the same file as ${holder.path}`
        : '';
    throw new ServeError(
      `data file ${path} is in use by another petinv serve${owner}${byAnotherName}; stop it or choose another file with --data`,
    );
  }
}

/**
 * Whether `path` is itself a mount point, as a single-file bind mount is (Linux: /proc/self/mountinfo,
 * whose fifth field is each mount point, with octal escapes for space, tab, newline and backslash);
 * false where that cannot be read.
 */
export function isMountPoint(path: string): boolean {
  let mounts: string;
  try {
    mounts = readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return false;
  }
  const unescaped = (field: string) =>
    field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
  return mounts.split('\n').some((line) => {
    const point = line.split(' ')[4];
    return point !== undefined && unescaped(point) === path;
  });
}

/**
 * What a refusal of a single-file bind mount must add when a journal with commits lies beside the mount:
 * one an earlier petinv kept there, serving through the mount. Every update it made since is there and
 * nowhere else, and a serve on the data file's directory, as the refusal advises, never reads it.
 */
function journalBesideMount(dataFile: string): string {
  const journal = `${dataFile}.journal`;
  let size: number;
  try {
    size = lstatSync(journal).size;
  } catch {
    return '';
  }
  if (size <= JOURNAL_HEADER.length) return '';
  return `. ${journal} beside the mount holds updates made through it that the data file lacks, and a serve on the file's directory never reads it: first serve a copy of the data file with that journal beside it (the two in one directory), and bind-mount what that serve writes`;
}

/**
 * Why a data file that has other names (hard links) and no journal beside this one must not be served
 * through it, or undefined. serve keeps its journal beside the name it was started with: through another
 * name, a start after kill -9 would serve the snapshot without the updates that journal holds, and accept
 * writes that go their own way. The name a serve wrote through has its journal; a copy made with a link (a
 * backup) has none, and is refused until it is a copy of its own.
 */
function linkedElsewhere(dataFile: string): string | undefined {
  let links: number;
  try {
    links = statSync(dataFile).nlink;
  } catch {
    return undefined; // Not there yet: a new data file.
  }
  if (links <= 1 || existsSync(`${dataFile}.journal`)) return undefined;
  return `data file ${dataFile} has ${links - 1} other name${links === 2 ? '' : 's'} (hard links) and no journal beside this one: a serve started through another name keeps its journal beside that name, so this start would serve the data file without the updates that journal holds; start serve through the name it was started with, or make this one a copy of its own (cp, not ln)`;
}

/** The inventory a start opens: in memory, loaded read-only, or durable in a locked data file. */
interface OpenedInventory {
  store: InventoryStore;
  /** The data file the store writes through; undefined when nothing is written. */
  file?: InventoryFile;
  /** Releases the data file's lock; a no-op when none was taken. */
  unlock: () => Promise<void>;
  /** What the operator should know of the start: a lock record that could not be written, say. */
  warnings: string[];
  seeded: boolean;
  dataFormat: DataFileFormat | undefined;
  journal: JournalReport;
}

async function openInventory(
  options: ServeOptions,
  dataFile: string | undefined,
  readOnly: boolean,
): Promise<OpenedInventory> {
  const seed = () => seedInventory(options.seed ?? DEFAULT_SEED_COUNT);
  const unlocked = async () => {};
  if (!dataFile)
    return {
      store: new InventoryStore(seed()),
      unlock: unlocked,
      warnings: [],
      seeded: true,
      dataFormat: undefined,
      journal: {},
    };
  if (readOnly) {
    const loaded = readInventoryFile(dataFile, { recover: options.recover });
    const { damage } = loaded.journal;
    return {
      store: new InventoryStore(loaded.items),
      unlock: unlocked,
      warnings: [],
      seeded: false,
      dataFormat: loaded.format,
      // Loaded, never written: a torn commit stays in the file, and out of the inventory; so does damage.
      journal:
        damage?.kind === 'damaged'
          ? {
              recovered: {
                offset: damage.offset,
                reason: damage.reason,
                commitsReplayed: loaded.journal.commits,
                updatesReplayed: loaded.journal.entries,
                commitsLost: damage.commitsAfter,
                updatesLost: damage.updatesAfter,
              },
            }
          : {},
    };
  }
  createDataDirectory(dataFile, options.files);
  const lockPath = `${dataFile}.lock`;
  const foundLock = keepLockFile(lockPath);
  const lock = await lockDataFile(dataFile, options.files);
  const unlock = () => lock.release();
  if (isMountPoint(dataFile)) {
    await unlock();
    putBackLockFile(lockPath, foundLock);
    throw new ServeError(
      `data file ${dataFile} is a mount point of its own (a single-file bind mount): no snapshot can replace it (each is a new file renamed into place), and its journal would be kept beside the mount, not beside the file, where a serve on the file itself never sees it; bind-mount the data file's directory instead${journalBesideMount(dataFile)}`,
    );
  }
  const otherName = linkedElsewhere(dataFile);
  if (otherName) {
    await unlock();
    putBackLockFile(lockPath, foundLock);
    throw new ServeError(otherName);
  }
  const warnings = lock.recordProblem
    ? [
        `the lock record ${dataFile}.lock could not be written (${describeFileSystemError(lock.recordProblem)}); this serve still holds the data file, by its identity`,
      ]
    : [];
  const logFault = (fault: string) => options.log?.({ method: '-', path: dataFile, fault });
  let file: InventoryFile | undefined;
  try {
    const opened = await InventoryFile.open(dataFile, seed, {
      files: options.files,
      // A snapshot is a new file renamed into place: the lock follows it to its new identity.
      onSnapshotReplaced: () =>
        void lock
          .follow()
          .catch((error: unknown) => logFault(`cannot lock the new snapshot: ${(error as Error).message}`)),
      recover: options.recover,
    });
    file = opened.file;
    // A data file this start created has an identity only now.
    await lock.follow();
    const store = new InventoryStore(opened.items, file, {
      onSnapshotError: (error) => logFault(`${(error as Error).message}; the journal keeps every change`),
    });
    return {
      store,
      file,
      unlock,
      warnings,
      seeded: opened.created,
      dataFormat: file.format,
      journal: opened.journal,
    };
  } catch (error) {
    await file?.close();
    await unlock();
    putBackLockFile(lockPath, foundLock);
    throw error;
  }
}

/** Listens on `host:port`; an address the machine refuses is a ServeError that says what to do. */
async function listen(server: Server, host: string, port: number): Promise<void> {
  try {
    await new Promise<void>((resolve, reject) => {
      const fail = (error: Error) => reject(error);
      server.once('error', fail);
      server.listen(port, host, () => {
        server.off('error', fail);
        resolve();
      });
    });
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    const where = `${host}:${port}`;
    if (code === 'EADDRINUSE')
      throw new ServeError(
        `port ${port} on ${host} is already in use; choose another with --port (0 picks a free one)`,
      );
    if (code === 'EACCES')
      throw new ServeError(`not allowed to listen on ${where}; choose a port above 1023 with --port`);
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND')
      throw new ServeError(`cannot listen on ${where}: no such address on this machine`);
    throw error;
  }
}

/** Stops accepting, lets requests in flight finish (cut after `graceMs`), flushes and unlocks; once. */
function stopper(edge: HttpEdge, inventory: OpenedInventory): RunningServer['close'] {
  const { server, drain } = edge;
  const { store, file, unlock } = inventory;
  let closing: Promise<void> | undefined;
  return (graceMs = 3000) =>
    (closing ??= (async () => {
      drain();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), graceMs);
      await closed;
      clearTimeout(timer);
      await store.close();
      try {
        await file?.close(() => store.listBody());
      } catch (error) {
        throw new ServeError(
          `${(error as Error).message}; the previous snapshot and the journal ${file?.journalPath} are intact, and the next start replays them`,
        );
      } finally {
        await unlock();
      }
    })());
}

/**
 * A start refused after it changed the journal (a port in use, say) never logs the notices that say what
 * it did: the refusal says it instead. A torn last commit cut on a disk with no room for its `.torn-` file
 * is held nowhere else; a --recover's count of the commits it could not replay, nowhere at all, as the
 * next start finds a sound journal and says nothing.
 */
function withJournalReport(error: unknown, journal: JournalReport, dataFile: string | undefined): unknown {
  const { torn, recovered } = journal;
  const done: string[] = [];
  if (torn) {
    const kept =
      'keptAt' in torn
        ? `it is kept in ${torn.keptAt}`
        : `the disk had no room for a file of it, so here are its bytes (base64): ${torn.base64}`;
    done.push(
      `this start had already cut a torn last commit (never acknowledged, ${torn.bytes} bytes long) from the journal of ${dataFile}: ${kept}`,
    );
  }
  if (recovered)
    done.push(
      `this start had already recovered from the journal of ${dataFile}, damaged at byte offset ${recovered.offset} (${recovered.reason}): ${commitsText(recovered.commitsLost)} (${updatesText(recovered.updatesLost)}) after the damage ${recovered.commitsLost === 1 ? 'was' : 'were'} not replayed, and the damaged journal was moved, byte for byte, to ${recovered.keptAt}`,
    );
  if (done.length === 0) return error;
  return new ServeError([(error as Error).message, ...done].join('; '));
}

/** Starts the embedded inventory service; the library's server factory. */
export async function startInventoryServer(options: ServeOptions): Promise<RunningServer> {
  const host = options.host ?? DEFAULT_SERVE_HOST;
  const port = options.port ?? DEFAULT_SERVE_PORT;
  const dataFile = options.dataFile === undefined ? undefined : resolveDataPath(options.dataFile);
  const readOnly = options.inMemory === true;
  const inventory = await openInventory(options, dataFile, readOnly);
  const { store } = inventory;

  let baseUrl = DEFAULT_BASE_URL;
  // The served OpenAPI document names the address really bound, known once listening.
  const app = createInventoryApp({ ...options, store, baseUrl: () => baseUrl });
  const edge = createHttpEdge(app, options);
  try {
    await listen(edge.server, host, port);
  } catch (error) {
    await inventory.file?.close();
    await inventory.unlock();
    throw withJournalReport(error, inventory.journal, dataFile);
  }
  const { port: boundPort } = edge.server.address() as AddressInfo;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  baseUrl = `http://${urlHost}:${boundPort}${API_PREFIX}`;

  return {
    baseUrl,
    host,
    port: boundPort,
    dataFile,
    readOnly,
    dataFormat: inventory.dataFormat,
    seeded: inventory.seeded,
    droppedJournalBytes: inventory.journal.torn?.bytes ?? 0,
    warnings: inventory.warnings,
    journal: inventory.journal,
    pets: store.size,
    server: edge.server,
    close: stopper(edge, inventory),
  };
}
