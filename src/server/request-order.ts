import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

const PLACE_FIXED = Symbol('the place of this write among the writes is fixed');
type PlacedRequest = IncomingMessage & { [PLACE_FIXED]?: () => void };

/** Called once a write is queued in the store: a PATCH pipelined behind it may start, and join its commit. */
export function placeFixed(req: IncomingMessage): void {
  (req as PlacedRequest)[PLACE_FIXED]?.();
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
const track = (socket: OrderedSocket) => (socket[TURNS] = { waiting: [], unanswered: 0, unplaced: 0 });

/**
 * The most requests one connection may have waiting for their turn: node:http parses all that arrives, so
 * a client that never reads its answers would queue them without end. Past this the connection is closed
 * and what waited is dropped unanswered (none of it was acknowledged).
 */
export const MAX_WAITING_PER_CONNECTION = 8192;

/** Pipelined writes a connection may have started unanswered: enough for a commit, little for a non-reader. */
export const MAX_STARTED_WRITES_PER_CONNECTION = 64;

/**
 * Pipelined requests handled in order as docs/serve.md says (RFC 9112 section 9.3.2), where node:http starts
 * them all at once and only orders the responses. None starts behind an answer that closes the connection:
 * its client would never learn that it ran (a storage failure keeps the connection open, so only a stopping
 * server closes one behind started writes, with its last answer). The GET hot path costs no bookkeeping.
 */
export function inOrderPerConnection(
  handle: (req: IncomingMessage, res: ServerResponse) => void | Promise<void>,
  log: ((entry: { event: 'pipeline_overflow'; limit: number }) => void) | undefined,
): (req: IncomingMessage, res: ServerResponse) => void {
  const ended = (socket: OrderedSocket) => socket.destroyed || socket[CLOSING] === true;
  // An answer that ends its connection (sendError's `Connection: close`, HTTP/1.0, a stopping server).
  const answered = (socket: OrderedSocket, res: ServerResponse) => {
    if (!res.shouldKeepAlive) socket[CLOSING] = true;
  };
  const mayStart = (turns: Turns, req: IncomingMessage) =>
    turns.unanswered === 0 ||
    (turns.unplaced === 0 && req.method === 'PATCH' && turns.unanswered < MAX_STARTED_WRITES_PER_CONNECTION);

  /** Counts `req` as started until it is answered; `run` calls its handler. */
  const start = (
    socket: OrderedSocket,
    turns: Turns,
    req: IncomingMessage,
    res: ServerResponse,
    run = () => handle(req, res),
  ) => {
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
    void Promise.resolve(run()).finally(() => {
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
    if (req.method === 'PATCH') return start(socket, track(socket), req, res);
    // The hot path: a request answered before the handler returns needs no turns at all.
    const handled = handle(req, res);
    if (res.writableEnded) answered(socket, res);
    else start(socket, track(socket), req, res, () => handled);
  };
}
