import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { AppHandler, AppOptions } from './app';
import {
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
  DEFAULT_REQUEST_TIMEOUT_MS,
} from './defaults';
import { answerBelowTheApp, type Timeouts } from './protocol-errors';
import { holdContinue } from './request';
import { inOrderPerConnection } from './request-order';
import { closeAfter } from './respond';

const KEEP_ALIVE_TIMEOUT_MS = 5000;

export interface HttpEdgeOptions {
  log?: AppOptions['log'];
  /** Headers must arrive within this many ms of a request's first byte (default 10000). */
  headersTimeout?: number;
  /** The whole request, body included, within this many ms (default 30000). */
  requestTimeout?: number;
  /** Open connections past which new ones are closed at once (default 1024). */
  maxConnections?: number;
  /** Open connections of one client (an address, an IPv6 /64) past which its new ones are closed (default 256). */
  maxConnectionsPerClient?: number;
}

/** Counts refusals by whom they refused, and reports them at most once a second. */
function refusalReporter(report: (who: string, count: number) => void): (who: string) => void {
  const refused = new Map<string, number>();
  let reportedAt = Number.NEGATIVE_INFINITY;
  return (who) => {
    refused.set(who, (refused.get(who) ?? 0) + 1);
    const now = Date.now();
    if (now - reportedAt < 1000) return;
    for (const [refusedWho, count] of refused) report(refusedWho, count);
    refused.clear();
    reportedAt = now;
  };
}

/** Who a connection counts against, as docs/serve-operations.md says: its address, an IPv6 one by its /64. */
export function clientOf(address: string | undefined): string | undefined {
  if (address === undefined) return undefined;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  if (!address.includes(':')) return address;
  const [head = '', tail = ''] = address.split('%')[0]?.split('::') ?? [];
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === '' ? [] : tail.split(':');
  const zeros = Array(Math.max(0, 8 - headGroups.length - tailGroups.length)).fill('0');
  const groups = [...headGroups, ...zeros, ...tailGroups].slice(0, 4);
  return `${groups.map((group) => Number.parseInt(group, 16).toString(16)).join(':')}::/64`;
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
 * Counts the open connections, all and per client: past --max-connections-per-client a client's new ones
 * are closed at once. At a stop, node:http's closeIdleConnections would also cut an answer being written
 * (a large list to a slow reader): this one closes idle ones, the returned drain the rest once answered.
 */
function manageConnections(
  server: Server,
  limit: number,
  log: HttpEdgeOptions['log'],
  latestResponse: WeakMap<Socket, ServerResponse>,
): () => void {
  const connections = new Set<Socket>();
  const perClient = new Map<string, number>();
  const refused = refusalReporter((client, count) =>
    log?.({ event: 'client_connections_refused', client, count, limit }),
  );
  server.on('connection', (socket: Socket) => {
    const client = clientOf(socket.remoteAddress);
    if (client === undefined) return; // Already gone.
    const count = perClient.get(client) ?? 0;
    if (count >= limit) {
      socket.destroy();
      refused(client);
      return;
    }
    perClient.set(client, count + 1);
    connections.add(socket);
    socket.once('close', () => {
      connections.delete(socket);
      const left = (perClient.get(client) ?? 1) - 1;
      if (left > 0) perClient.set(client, left);
      else perClient.delete(client);
    });
  });
  server.closeIdleConnections = () => {
    for (const socket of connections) {
      const res = latestResponse.get(socket);
      if (!res || res.writableFinished) socket.destroy();
    }
  };
  return () => {
    for (const socket of connections) {
      const res = latestResponse.get(socket);
      if (res && !res.writableFinished) closeAfter(res, socket); // idle: server.close() closes it
    }
  };
}

export function createHttpEdge(app: AppHandler, options: HttpEdgeOptions) {
  const { log } = options;
  const timeouts: Timeouts = {
    headersTimeout: options.headersTimeout ?? DEFAULT_HEADERS_TIMEOUT_MS,
    requestTimeout: options.requestTimeout ?? DEFAULT_REQUEST_TIMEOUT_MS,
  };
  const maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  const maxConnectionsPerClient = options.maxConnectionsPerClient ?? DEFAULT_MAX_CONNECTIONS_PER_CLIENT;

  let draining = false;
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
  // With a listener, node:http leaves 100 Continue to the body reader, once key and size are checked (request.ts).
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    // A request without a body has nothing to wait for.
    const bodiless =
      req.headers['content-length'] === '0' ||
      (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined);
    if (!bodiless) holdContinue(req, res, () => !draining);
    onRequest(req, res);
  });

  const closeBusyConnections = manageConnections(server, maxConnectionsPerClient, log, latestResponse);
  answerBelowTheApp(server, timeouts, log, latestResponse);
  // Past --max-connections node:net closes new connections at once.
  const refused = refusalReporter((_, count) =>
    log?.({ event: 'connections_refused', count, limit: maxConnections }),
  );
  server.on('drop', () => refused('any client'));

  /** Called once when the server starts stopping: the answers under way close their connections. */
  function drain() {
    draining = true;
    closeBusyConnections();
  }

  return { server, drain };
}
