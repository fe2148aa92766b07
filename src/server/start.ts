import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_BASE_URL, DEFAULT_SERVE_HOST, DEFAULT_SERVE_PORT } from '../contract/defaults';
import { createInventoryApp, type FaultOptions } from './app';
import type { DataFileFormat } from './data-format';
import { resolveDataPath } from './data-path';
import { ServeError } from './errors';
import { createHttpEdge, type HttpEdgeOptions } from './http-server';
import type { JournalReport } from './journal-open';
import { commitsText, updatesText } from './journal-replay';
import { type InventoryOptions, type OpenedInventory, openInventory } from './opened-inventory';
import { API_PREFIX } from './routes';
import { openStoreId } from './store-id';

export interface ServeOptions extends FaultOptions, InventoryOptions, HttpEdgeOptions {
  host?: string;
  port?: number;
  apiKeys: readonly string[];
  /** False: no log entry per request (--quiet). */
  logRequests?: boolean;
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

/** Listens on `host:port`; an address the machine refuses is a ServeError that says what to do. */
async function listen(server: Server, host: string, port: number): Promise<void> {
  await once(server.listen(port, host), 'listening').catch((error: unknown) => {
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
  });
}

/** Stops accepting, lets requests in flight finish (cut after `graceMs`), flushes and unlocks; once. */
function stopper(
  { server, drain }: ReturnType<typeof createHttpEdge>,
  { store, file, unlock }: OpenedInventory,
): RunningServer['close'] {
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
 * A start refused after it changed the journal (a port in use, say) never logs its notices, so the
 * refusal says what it did: a torn commit's bytes or a --recover's losses are told nowhere else.
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
  const storeId = openStoreId(dataFile, readOnly, options.files);
  // The served OpenAPI document names the address really bound, known once listening.
  const app = createInventoryApp({ ...options, store, storeId, baseUrl: () => baseUrl });
  const edge = createHttpEdge(app, options);
  await listen(edge.server, host, port).catch(async (error: unknown) => {
    await inventory.file?.close();
    await inventory.unlock();
    throw withJournalReport(error, inventory.journal, dataFile);
  });
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
