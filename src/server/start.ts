import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { LOCAL_SERVE_HOST, LOCAL_SERVE_PORT } from '../config/paths';
import { configError } from '../errors';
import type { FileSystem } from '../files/file-system';
import { type AppOptions, createInventoryApp, type FaultOptions } from './app';
import {
  createDataDirectory,
  type DataFileFormat,
  InventoryFile,
  readInventoryFile,
  resolveDataPath,
} from './data-file';
import { lockDataFile } from './lock';
import { InventoryStore, seedInventory } from './store';

export const DEFAULT_SEED_COUNT = 12;

export interface ServeOptions extends FaultOptions {
  host?: string;
  port?: number;
  /** The data file; undefined keeps the inventory in memory only. */
  dataFile?: string;
  /** With a data file: load it, and never write it (a fixture that stays pristine). */
  inMemory?: boolean;
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
  pets: number;
  server: Server;
  /** Stops accepting, lets requests in flight finish, flushes and unlocks the data file. */
  close(graceMs?: number): Promise<void>;
}

/** Starts the embedded inventory service; the library's server factory. */
export async function startInventoryServer(options: ServeOptions): Promise<RunningServer> {
  const host = options.host ?? LOCAL_SERVE_HOST;
  const port = options.port ?? LOCAL_SERVE_PORT;
  const dataFile = options.dataFile === undefined ? undefined : resolveDataPath(options.dataFile);
  const readOnly = options.inMemory === true;
  let unlock: () => Promise<void> = async () => {};
  let file: InventoryFile | undefined;
  let store: InventoryStore;
  let seeded = true;
  let dataFormat: DataFileFormat | undefined;
  const seed = () => seedInventory(options.seed ?? DEFAULT_SEED_COUNT);

  if (dataFile && readOnly) {
    const loaded = readInventoryFile(dataFile);
    store = new InventoryStore(loaded.items);
    dataFormat = loaded.format;
    seeded = false;
  } else if (dataFile) {
    createDataDirectory(dataFile, options.files);
    unlock = await lockDataFile(dataFile, options.files);
    try {
      const opened = await InventoryFile.open(dataFile, seed, { files: options.files });
      file = opened.file;
      seeded = opened.created;
      dataFormat = file.format;
      store = new InventoryStore(opened.items, file, {
        onSnapshotError: (error) =>
          options.log?.({
            method: '-',
            path: dataFile,
            fault: `${(error as Error).message}; the journal keeps every change`,
          }),
      });
    } catch (error) {
      await file?.close();
      await unlock();
      throw error;
    }
  } else {
    store = new InventoryStore(seed());
  }

  const app = createInventoryApp({ ...options, store });
  const server = createServer({ keepAliveTimeout: 5000 }, inOrderPerConnection(app));
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
    await file?.close();
    await unlock();
    const { code } = error as NodeJS.ErrnoException;
    const where = `${host}:${port}`;
    if (code === 'EADDRINUSE')
      throw configError(
        `port ${port} on ${host} is already in use; choose another with --port (0 picks a free one)`,
      );
    if (code === 'EACCES')
      throw configError(`not allowed to listen on ${where}; choose a port above 1023 with --port`);
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND')
      throw configError(`cannot listen on ${where}: no such address on this machine`);
    throw error;
  }
  const { port: boundPort } = server.address() as AddressInfo;
  const urlHost = host.includes(':') ? `[${host}]` : host;

  let closing: Promise<void> | undefined;
  const close = (graceMs = 3000) =>
    (closing ??= (async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), graceMs);
      await closed;
      clearTimeout(timer);
      await store.close();
      try {
        await file?.close(() => store.listBody());
      } catch (error) {
        throw configError(
          `${(error as Error).message}; the previous snapshot and the journal ${file?.journalPath} are intact, and the next start replays them`,
        );
      } finally {
        await unlock();
      }
    })());

  return {
    baseUrl: `http://${urlHost}:${boundPort}/v1`,
    host,
    port: boundPort,
    dataFile,
    readOnly,
    dataFormat,
    seeded,
    pets: store.size,
    server,
    close,
  };
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

const WAITING = Symbol('requests waiting on this connection');
type OrderedSocket = Socket & { [WAITING]?: [IncomingMessage, ServerResponse][] };

/**
 * node:http starts every request pipelined on a connection at once and only orders the responses. RFC
 * 9112 section 9.3.2 wants them handled in order: PATCH 11, PATCH 22, GET must show 22. So a request
 * starts only once the one before it on its connection has been answered. A request answered at once
 * (the GET hot path) leaves nothing to wait for and costs no bookkeeping.
 */
function inOrderPerConnection(handle: Handler): (req: IncomingMessage, res: ServerResponse) => void {
  const drain = (socket: OrderedSocket): void => {
    for (let next = socket[WAITING]?.shift(); next; next = socket[WAITING]?.shift()) {
      const [req, res] = next;
      const handled = handle(req, res);
      if (!res.writableEnded) {
        void Promise.resolve(handled).finally(() => drain(socket));
        return;
      }
    }
    socket[WAITING] = undefined;
  };
  return (req, res) => {
    const socket = req.socket as OrderedSocket;
    const waiting = socket[WAITING];
    if (waiting) {
      waiting.push([req, res]);
      return;
    }
    const handled = handle(req, res);
    if (res.writableEnded) return;
    socket[WAITING] = [];
    void Promise.resolve(handled).finally(() => drain(socket));
  };
}
