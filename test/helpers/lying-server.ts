import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { afterAll, beforeAll } from 'vitest';

/**
 * Services that lie or break, on 127.0.0.1 port 0, for the tests of the client and the CLI: an HTTP
 * handler for what node:http can say (a wrong status, a cut or endless body, a hang, the wrong type),
 * a raw socket for what it cannot (a reset once the request is in, a garbage status line).
 */

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export interface FakeServer {
  server: Server;
  port: number;
  /** http://127.0.0.1:PORT, or https:// with a certificate */
  origin: string;
  /** Stops it, cutting the connections it holds. */
  close(): Promise<void>;
}

async function listening<S extends Server | NetServer>(server: S, port = 0): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return (server.address() as { port: number }).port;
}

/**
 * An HTTP server answering with `handler`: HTTPS with a certificate (test/helpers/tls.ts makes them), on
 * a given port when a test must hold that one (it rejects when the port is taken).
 */
export async function startFakeServer(
  handler: Handler = () => {},
  { tls, port: wanted }: { tls?: { key: string; cert: string }; port?: number } = {},
): Promise<FakeServer> {
  const server = tls ? createHttpsServer({ key: tls.key, cert: tls.cert }, handler) : createServer(handler);
  const port = await listening(server, wanted);
  return {
    server,
    port,
    origin: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** `start` for the tests of one file: started before them, closed after. Read its fields inside the tests. */
function useServer<T extends { close(): Promise<void> }>(start: () => Promise<T>): T {
  const used = {} as T;
  beforeAll(async () => void Object.assign(used as object, await start()));
  afterAll(() => used.close());
  return used;
}

export const useFakeServer = (handler: Handler) => useServer(() => startFakeServer(handler));

/**
 * A handler that lets the first path segment pick a scenario, so that each test's base URL
 * (`${origin}/<scenario>/v1`) says how the service misbehaves; `heard` collects `METHOD /path` of each request.
 */
export function byScenario(scenarios: Record<string, Handler>, heard?: string[]): Handler {
  return (req, res) => {
    heard?.push(`${req.method} ${req.url}`);
    scenarios[String(req.url).split('/')[1] ?? '']?.(req, res);
  };
}

/** Answers with `status` and `body` (JSON unless the headers say otherwise). */
export const answer =
  (status: number, body: string | object = '', headers: Record<string, string> = {}): Handler =>
  (req, res) => {
    req.resume();
    res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };

/** The service's Error body. */
export const errorBody = (status: number, code: string, message = 'nope') => ({ code, message, status });

/** Takes the request and never answers. */
export const hang: Handler = (req) => void req.resume();

/** A 200 whose body never ends, written as fast as the client reads. */
export const endless =
  (chunk: string, start = '['): Handler =>
  (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.write(start);
    const piece = Buffer.from(chunk.repeat(Math.ceil(40_000 / chunk.length)));
    const pump = () => {
      while (!res.destroyed && res.write(piece)) {}
      if (!res.destroyed) res.once('drain', pump);
    };
    pump();
  };

/** A 200 that promises `length` bytes, sends `partial`, then loses its connection. */
export const cutShort =
  (partial: string, length = 1000): Handler =>
  (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': String(length) });
    res.write(partial);
    setTimeout(() => res.socket?.destroy(), 5);
  };

/** A 200 whose headers come at once, then a space every 20 ms, for ever: no read waits long. */
export const trickle: Handler = (_req, res) => {
  res.writeHead(200, { 'Content-Type': 'application/json' });
  const timer = setInterval(() => res.write(' '), 20);
  res.on('close', () => clearInterval(timer));
};

/**
 * A 200 written in pieces 30 ms apart, so the client meets them as separate chunks; a function piece
 * acts on the response (ends it, or cuts its connection: `(r) => r.socket?.destroy()`).
 */
export const inTurn =
  (pieces: Array<string | ((res: ServerResponse) => void)>, headers: Record<string, string> = {}): Handler =>
  (_req, res) => {
    const left = [...pieces];
    res.writeHead(200, { 'Content-Type': 'application/json', ...headers });
    const next = () => {
      const piece = left.shift();
      if (piece === undefined || res.destroyed) return;
      if (typeof piece === 'function') piece(res);
      else res.write(piece);
      setTimeout(next, 30);
    };
    next();
  };

/** A request as a raw server read it, whole. */
export interface RawRequest {
  method: string;
  path: string;
  body: string;
  socket: Socket;
  /** How many requests of the same first path segment came before this one. */
  seen: number;
}

/** Answers on the raw socket and closes the connection. */
export const rawAnswer = (socket: Socket, status: number, body: string, extra = '') =>
  socket.end(
    `HTTP/1.1 ${status} X\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n${extra}\r\n${body}`,
  );

/** Ways a connection breaks after the request was read whole, where node:http would answer properly. */
export const BREAKS: Record<string, (socket: Socket) => void> = {
  reset: (socket) => socket.resetAndDestroy(),
  closed: (socket) => socket.end(),
  garbage: (socket) => socket.end('HTTX/1.1 200 OK\r\n\r\n'),
  overflow: (socket) => socket.end(`HTTP/1.1 200 OK\r\nX-Filler: ${'a'.repeat(70_000)}\r\n\r\n`),
  upgrade: (socket) =>
    socket.end('HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: upgrade\r\n\r\n'),
  // A status below 200 on a final answer: an interim one says nothing of the request, nor does this.
  'bare-101': (socket) => socket.end('HTTP/1.1 101 Switching Protocols\r\n\r\n'),
  'status-099': (socket) => socket.end('HTTP/1.1 099 Early\r\nContent-Length: 0\r\n\r\n'),
  'length-and-chunked': (socket) =>
    socket.end(
      'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n2a\r\n{"petId":1,"quantity":7,"status":"sold"}\r\n0\r\n\r\n',
    ),
};

/**
 * A TCP server that reads each request whole (head and Content-Length body) and hands it to `respond`,
 * which answers on the socket as it likes.
 */
export async function startRawServer(respond: (request: RawRequest) => void) {
  const counts = new Map<string, number>();
  const sockets = new Set<Socket>();
  const server = createNetServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    let buffered = Buffer.alloc(0);
    socket.on('error', () => {});
    socket.on('data', (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      // Each request whole as it arrives, pipelined ones too.
      for (;;) {
        const end = buffered.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buffered.subarray(0, end).toString('latin1');
        const length = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (buffered.length < end + 4 + length) return;
        const [method = '', path = ''] = head.split(' ');
        const body = buffered.subarray(end + 4, end + 4 + length).toString();
        buffered = buffered.subarray(end + 4 + length);
        const scenario = path.split('/')[1] ?? '';
        const seen = counts.get(scenario) ?? 0;
        counts.set(scenario, seen + 1);
        respond({ method, path, body, socket, seen });
      }
    });
  });
  const port = await listening(server);
  return {
    server,
    port,
    origin: `http://127.0.0.1:${port}`,
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export const useRawServer = (respond: (request: RawRequest) => void) =>
  useServer(() => startRawServer(respond));
