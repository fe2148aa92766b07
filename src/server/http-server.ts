import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { AppHandler, AppOptions } from './app';
import {
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
  DEFAULT_REQUEST_TIMEOUT_MS,
} from './defaults';
import { PLACE_FIXED, type PlacedRequest } from './pipelining';
import { answerBelowTheApp, type Timeouts } from './protocol-errors';
import { holdContinue } from './request';

/**
 * The HTTP layer under the app: requests answered in order per connection, connections counted and capped,
 * and a stopping server lets no new request start on a kept-alive connection. What node:http answers by
 * itself is answered with the same Error bodies as every route (protocol-errors.ts).
 */

const KEEP_ALIVE_TIMEOUT_MS = 5000;

export interface HttpEdgeOptions {
  log?: AppOptions['log'];
  headersTimeout?: number;
  requestTimeout?: number;
  maxConnections?: number;
  maxConnectionsPerClient?: number;
}

export interface HttpEdge {
  server: Server;
  /** Called once when the server starts stopping: the answers under way close their connections. */
  drain(): void;
}

const TURNS = Symbol('the requests of this connection, waiting and started');
const CLOSING = Symbol('an answer on this connection closes it');

/** A connection's requests between their arrival and their answer. */
interface Turns {
  /** Arrived, not started. */
  waiting: [IncomingMessage, ServerResponse][];
  /** Started, not answered. */
  unanswered: number;
  /** Of those, how many have not yet fixed their place (placeFixed): all but writes queued in the store. */
  unplaced: number;
}
type OrderedSocket = Socket & { [TURNS]?: Turns; [CLOSING]?: true };

/**
 * The most requests one connection may have waiting for their turn. node:http parses all that arrives,
 * so a client that pipelines faster than its requests are answered (one that never reads its answers,
 * say) would queue them without end: memory, and an event loop busy with them long after that client
 * has gone. Past this the connection is closed, and what waited is dropped unanswered, as when the client
 * closes it (none of it was acknowledged).
 */
export const MAX_WAITING_PER_CONNECTION = 8192;

/**
 * The most pipelined writes one connection may have started and not yet answered (see
 * inOrderPerConnection): enough to fill a group commit, few enough that a client which never reads its
 * answers holds little; the rest wait their turn, and MAX_WAITING_PER_CONNECTION bounds those.
 */
export const MAX_STARTED_WRITES_PER_CONNECTION = 64;

/**
 * node:http starts every request pipelined on a connection at once and only orders the responses. RFC
 * 9112 section 9.3.2 wants them handled in order: PATCH 11, PATCH 22, GET must show 22. So a request
 * starts only once the one before it on its connection has been answered, and none starts behind an
 * answer that closes the connection: its client would never learn that it ran. One exception keeps a
 * pipelining client's writes in one group commit rather than one commit each: a PATCH starts as soon as
 * every request before it is a PATCH whose update is queued in the store (placeFixed), since the store
 * applies its queue in order and the answers go out in order. A storage failure is answered without
 * closing the connection, so no write starts behind an answer that closes it unless the server is
 * stopping, when the last request of each connection is the one whose answer closes it. A request
 * answered at once (the GET hot path) leaves nothing to wait for and costs no bookkeeping.
 */
function inOrderPerConnection(
  handle: AppHandler,
  log: HttpEdgeOptions['log'],
): (req: IncomingMessage, res: ServerResponse) => void {
  /** Whether `socket` takes no more requests: closed, or closing once its answers are out. */
  const ended = (socket: OrderedSocket) => socket.destroyed || socket[CLOSING] === true;
  // An answer that ends its connection (sendError's `Connection: close`, HTTP/1.0, a stopping server).
  const answered = (socket: OrderedSocket, res: ServerResponse) => {
    if (!res.shouldKeepAlive) socket[CLOSING] = true;
  };
  const mayStart = (turns: Turns, req: IncomingMessage) =>
    turns.unanswered === 0 ||
    (turns.unplaced === 0 && req.method === 'PATCH' && turns.unanswered < MAX_STARTED_WRITES_PER_CONNECTION);

  const start = (socket: OrderedSocket, turns: Turns, req: IncomingMessage, res: ServerResponse) => {
    turns.unanswered++;
    turns.unplaced++;
    let placed = false;
    const place = () => {
      if (placed) return;
      placed = true;
      turns.unplaced--;
    };
    if (req.method === 'PATCH')
      (req as PlacedRequest)[PLACE_FIXED] = () => {
        place();
        next(socket, turns);
      };
    void Promise.resolve(handle(req, res)).finally(() => {
      place();
      turns.unanswered--;
      answered(socket, res);
      next(socket, turns);
    });
  };

  /** Starts what may start now; forgets the connection's turns once nothing waits or is under way. */
  const next = (socket: OrderedSocket, turns: Turns): void => {
    for (let waiting = turns.waiting[0]; waiting; waiting = turns.waiting[0]) {
      // Nobody left to answer: what still waited was never started, nor acknowledged.
      if (ended(socket)) turns.waiting.length = 0;
      else if (mayStart(turns, waiting[0])) {
        turns.waiting.shift();
        start(socket, turns, ...waiting);
      } else return;
    }
    if (turns.unanswered === 0 && socket[TURNS] === turns) socket[TURNS] = undefined;
  };

  return (req, res) => {
    const socket = req.socket as OrderedSocket;
    // What node:http still parses from a connection that is ending is dropped with it.
    if (ended(socket)) return;
    const turns = socket[TURNS];
    if (turns) {
      if (turns.waiting.length >= MAX_WAITING_PER_CONNECTION) {
        socket[TURNS] = undefined;
        turns.waiting.length = 0;
        socket.destroy();
        log?.({ event: 'pipeline_overflow', limit: MAX_WAITING_PER_CONNECTION });
        return;
      }
      turns.waiting.push([req, res]);
      next(socket, turns);
      return;
    }
    if (req.method !== 'PATCH') {
      // The hot path: a request answered before the handler returns needs no turns at all.
      const handled = handle(req, res);
      if (res.writableEnded) {
        answered(socket, res);
        return;
      }
      const started: Turns = { waiting: [], unanswered: 1, unplaced: 1 };
      socket[TURNS] = started;
      void Promise.resolve(handled).finally(() => {
        started.unanswered--;
        started.unplaced--;
        answered(socket, res);
        next(socket, started);
      });
      return;
    }
    const fresh: Turns = { waiting: [], unanswered: 0, unplaced: 0 };
    socket[TURNS] = fresh;
    start(socket, fresh, req, res);
  };
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
 * Who a connection counts against: its address, an IPv4 address given in IPv6 form as itself, and an IPv6
 * address by its /64 (a single host is usually given a whole /64, and may use any address in it).
 */
export function clientOf(address: string | undefined): string | undefined {
  if (address === undefined) return undefined;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  if (!address.includes(':')) return address;
  const [head = '', tail = ''] = address.split('%')[0]?.split('::') ?? [];
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === '' ? [] : tail.split(':');
  const groups = address.includes('::')
    ? [
        ...headGroups,
        ...Array(Math.max(0, 8 - headGroups.length - tailGroups.length)).fill('0'),
        ...tailGroups,
      ]
    : headGroups;
  return `${groups
    .slice(0, 4)
    .map((group) => Number.parseInt(group, 16).toString(16))
    .join(':')}::/64`;
}

/**
 * Past --max-connections-per-client open connections from one client, its new ones are closed at once,
 * so that no one client can hold every connection the server allows. Said at most once a second, per
 * client refused.
 */
function capConnectionsPerClient(server: Server, limit: number, log: HttpEdgeOptions['log']) {
  const open = new Map<string, number>();
  const refused = new Map<string, number>();
  let reportedAt = Number.NEGATIVE_INFINITY;
  server.on('connection', (socket: Socket) => {
    const client = clientOf(socket.remoteAddress);
    if (client === undefined) return; // Already gone.
    const count = open.get(client) ?? 0;
    if (count >= limit) {
      socket.destroy();
      refused.set(client, (refused.get(client) ?? 0) + 1);
      const now = Date.now();
      if (now - reportedAt < 1000) return;
      for (const [who, times] of refused)
        log?.({ event: 'client_connections_refused', client: who, count: times, limit });
      refused.clear();
      reportedAt = now;
      return;
    }
    open.set(client, count + 1);
    socket.once('close', () => {
      const left = (open.get(client) ?? 1) - 1;
      if (left > 0) open.set(client, left);
      else open.delete(client);
    });
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
  const maxConnectionsPerClient = options.maxConnectionsPerClient ?? DEFAULT_MAX_CONNECTIONS_PER_CLIENT;

  let draining = false;
  const connections = new Set<Socket>();
  /** The response of the latest request each connection started; a connection without one is fresh. */
  const latestResponse = new WeakMap<Socket, ServerResponse>();
  const handle = inOrderPerConnection(app, log);

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
  // With a listener, node:http no longer answers 100 Continue by itself: the body reader does, once the
  // key and the declared size have been checked (request.ts).
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    // A request without a body has nothing to wait for.
    const bodiless =
      req.headers['content-length'] === '0' ||
      (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined);
    if (!bodiless) holdContinue(req, res, () => !draining);
    onRequest(req, res);
  });

  capConnectionsPerClient(server, maxConnectionsPerClient, log);
  trackConnections(server, connections, latestResponse);
  answerBelowTheApp(server, timeouts, log, latestResponse);
  reportRefusedConnections(server, maxConnections, log);

  function drain() {
    draining = true;
    closeAfterTheirAnswers(connections, latestResponse);
  }

  return { server, drain };
}
