import {
  createServer,
  type IncomingMessage,
  maxHeaderSize,
  type Server,
  type ServerResponse,
  STATUS_CODES,
} from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { AppHandler, AppOptions } from './app';
import { HttpError } from './errors';
import { quoted, requestPath } from './request';
import { errorBody, JSON_TYPE, sendError } from './respond';
import { SERVER_METHODS } from './routes';

/**
 * The HTTP layer under the app: what node:http answers by itself (a request it cannot parse, one that is
 * too slow, an `Expect` it does not know, CONNECT) is answered here with the same Error bodies as every
 * route, and a stopping server lets no new request start on a kept-alive connection.
 */

export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** Far below the usual file-descriptor limits, far above what one machine's scripts open. */
export const DEFAULT_MAX_CONNECTIONS = 1024;
const KEEP_ALIVE_TIMEOUT_MS = 5000;
/** How long a connection answered with an error may keep sending before it is cut. */
const LINGER_MS = 2000;

export interface HttpEdgeOptions {
  log?: AppOptions['log'];
  headersTimeout?: number;
  requestTimeout?: number;
  maxConnections?: number;
}

export interface HttpEdge {
  server: Server;
  /** Called once when the server starts stopping: the answers under way close their connections. */
  drain(): void;
}

type WithResponse = { _httpMessage?: ServerResponse | null };

const WAITING = Symbol('requests waiting on this connection');
type OrderedSocket = Socket & { [WAITING]?: [IncomingMessage, ServerResponse][] };

/**
 * node:http starts every request pipelined on a connection at once and only orders the responses. RFC
 * 9112 section 9.3.2 wants them handled in order: PATCH 11, PATCH 22, GET must show 22. So a request
 * starts only once the one before it on its connection has been answered. A request answered at once
 * (the GET hot path) leaves nothing to wait for and costs no bookkeeping.
 */
function inOrderPerConnection(handle: AppHandler): (req: IncomingMessage, res: ServerResponse) => void {
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

/** A complete HTTP/1.1 response in one string, for a socket no ServerResponse belongs to. */
function rawErrorResponse(error: HttpError): string {
  const body = errorBody(error);
  const headers: Record<string, string | number> = {
    'Content-Type': JSON_TYPE,
    'Content-Length': Buffer.byteLength(body),
    Date: new Date().toUTCString(),
    Connection: 'close',
    ...error.headers,
  };
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  return `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\n${lines.join('')}\r\n${body}`;
}

/** Ends a socket after a last answer; it may keep sending (and is read and dropped) for a while. */
function endLingering(socket: Duplex, answer: string) {
  // Closing at once with unread bytes would send a reset, and the client could lose the answer.
  socket.end(answer);
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

interface Timeouts {
  headersTimeout: number;
  requestTimeout: number;
}

/** The Error answer for what node:http could not take as a request; undefined when nobody is left to read one. */
function describeClientError(
  error: NodeJS.ErrnoException & { reason?: string },
  { headersTimeout, requestTimeout }: Timeouts,
): HttpError | undefined {
  const close = { Connection: 'close' };
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new HttpError(
        'request_timeout',
        `the request did not arrive in time: headers are due within ${headersTimeout} ms, the whole request within ${requestTimeout} ms`,
        close,
      );
    case 'HPE_HEADER_OVERFLOW':
      return new HttpError('headers_too_large', `the request headers exceed ${maxHeaderSize} bytes`, close);
    // The client closed its side with a request unfinished: nobody is left to read an answer.
    case 'HPE_INVALID_EOF_STATE':
      return undefined;
  }
  if (!error.code?.startsWith('HPE_')) return undefined; // ECONNRESET and the like
  const reason = error.reason ?? 'unparsable';
  return new HttpError('malformed_request', `malformed request: ${reason}`, close);
}

/** Answers node:http's `clientError`s with Error bodies, once a connection, never over an answer under way. */
function clientErrorHandler(
  timeouts: Timeouts,
  log: HttpEdgeOptions['log'],
  latestResponse: WeakMap<Socket, ServerResponse>,
): (error: NodeJS.ErrnoException, socket: Duplex) => void {
  const answered = new WeakSet<Duplex>();
  return (error, socket) => {
    // node:http reports every later chunk of an unparsable connection again; the first answer stands.
    if (answered.has(socket)) return;
    const answer = describeClientError(error, timeouts);
    const response = (socket as Duplex & WithResponse)._httpMessage;
    if (answer && socket.writable && response?.req.complete) {
      // The bad bytes follow a whole request still being answered (pipelining): that answer goes out
      // whole, then the connection closes; an answer now would take its place.
      answered.add(socket);
      if (!response.headersSent) response.shouldKeepAlive = false;
      else response.once('finish', () => (socket as Socket).destroySoon());
      return;
    }
    // The request cut off was answered early (a 401 before its body, say) and its body never came whole:
    // it has had its one answer, and another now would be taken for the answer to a next request.
    const answeredEarly = latestResponse.get(socket as Socket);
    const alreadyAnswered = !response && answeredEarly !== undefined && !answeredEarly.req.complete;
    if (!answer || !socket.writable || response?.headersSent || alreadyAnswered) {
      socket.destroy();
      return;
    }
    answered.add(socket);
    log?.({ event: 'client_error', code: error.code ?? 'unknown', status: answer.status });
    if (response) {
      // A request already handed to the app (its body too slow): its own response carries the answer.
      response.shouldKeepAlive = false;
      sendError(response, answer);
    } else endLingering(socket, rawErrorResponse(answer));
  };
}

/** What node:http would answer by itself, or drop without a word, answered with Error bodies and logged. */
function answerBelowTheApp(
  server: Server,
  timeouts: Timeouts,
  log: HttpEdgeOptions['log'],
  latestResponse: WeakMap<Socket, ServerResponse>,
) {
  server.on('clientError', clientErrorHandler(timeouts, log, latestResponse));

  // Any Expect but 100-continue (which node:http answers itself).
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const expectation = quoted(String(req.headers.expect));
    sendError(
      res,
      new HttpError('expectation_failed', `Expect ${expectation} is not supported; only 100-continue is`),
    );
    log?.({ method: req.method ?? '', path: requestPath(req.url ?? '/'), status: 417, ms: 0 });
  });

  // Without a listener node:http drops a CONNECT without a word.
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    log?.({ method: req.method ?? '', path: req.url ?? '', status: 405, ms: 0 });
    endLingering(
      socket,
      rawErrorResponse(
        new HttpError('method_not_allowed', 'CONNECT is not supported: petinv serve is no proxy', {
          Allow: SERVER_METHODS,
        }),
      ),
    );
  });
}

/** Past --max-connections node:net closes new connections at once; say so, at most once a second. */
function reportRefusedConnections(server: Server, maxConnections: number, log: HttpEdgeOptions['log']) {
  let refused = 0;
  let reportedAt = Number.NEGATIVE_INFINITY;
  server.on('drop', () => {
    refused++;
    const now = Date.now();
    if (now - reportedAt < 1000) return;
    log?.({ event: 'connections_refused', count: refused, limit: maxConnections });
    refused = 0;
    reportedAt = now;
  });
}

/**
 * A request that arrived on a kept-alive connection after the stop began is not started (RFC 9112
 * section 9.6): the connection closes after the answers before it, and the client may retry elsewhere.
 */
function refuse(res: ServerResponse) {
  if (res.socket) res.socket.destroySoon();
  else res.once('socket', (socket: Socket) => socket.destroySoon());
}

/**
 * Keeps `connections` up to date. node:http's own closeIdleConnections also cuts a connection whose last
 * answer is ended but still being written (a large list to a slow reader) when the server stops; this one
 * closes only connections with nothing under way.
 */
function trackConnections(
  server: Server,
  connections: Set<Socket>,
  latestResponse: WeakMap<Socket, ServerResponse>,
) {
  server.closeIdleConnections = () => {
    for (const socket of connections) {
      const res = latestResponse.get(socket);
      if (!res || res.writableFinished) socket.destroy();
    }
  };
  server.on('connection', (socket: Socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });
}

/** On a stop, every connection with an answer under way closes once that answer is out. */
function closeAfterTheirAnswers(connections: Set<Socket>, latestResponse: WeakMap<Socket, ServerResponse>) {
  for (const socket of connections) {
    const res = latestResponse.get(socket);
    if (!res || res.writableFinished) continue; // idle: server.close() closes it
    if (!res.headersSent)
      res.shouldKeepAlive = false; // this answer says Connection: close and ends it
    else res.once('finish', () => socket.destroySoon());
  }
}

export function createHttpEdge(app: AppHandler, options: HttpEdgeOptions): HttpEdge {
  const { log } = options;
  const timeouts: Timeouts = {
    headersTimeout: options.headersTimeout ?? DEFAULT_HEADERS_TIMEOUT_MS,
    requestTimeout: options.requestTimeout ?? DEFAULT_REQUEST_TIMEOUT_MS,
  };
  const maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;

  let draining = false;
  const connections = new Set<Socket>();
  /** The response of the latest request each connection started; a connection without one is fresh. */
  const latestResponse = new WeakMap<Socket, ServerResponse>();
  const handle = inOrderPerConnection(app);

  function onRequest(req: IncomingMessage, res: ServerResponse) {
    const { socket } = req;
    if (draining) {
      if (latestResponse.has(socket)) return refuse(res);
      res.shouldKeepAlive = false;
    }
    latestResponse.set(socket, res);
    handle(req, res);
  }

  const server = createServer(
    {
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
      ...timeouts,
      // node:http checks the timeouts on this period (30 s by default), so it bounds their precision.
      connectionsCheckingInterval: Math.min(1000, Math.max(10, Math.floor(timeouts.headersTimeout / 4))),
      // Checked by the app, which answers with an Error body rather than node:http's empty 400.
      requireHostHeader: false,
    },
    onRequest,
  );
  server.maxConnections = maxConnections;

  trackConnections(server, connections, latestResponse);
  answerBelowTheApp(server, timeouts, log, latestResponse);
  reportRefusedConnections(server, maxConnections, log);

  function drain() {
    draining = true;
    closeAfterTheirAnswers(connections, latestResponse);
  }

  return { server, drain };
}
