import { createDeadline, type Deadline, meteredBody } from './body-stream';
import {
  BodyText,
  type Transport,
  TransportError,
  type TransportResponse,
  transportError,
} from './transport';
import type { Dispatcher } from './undici';

/** The origin and the path of an absolute URL, as a dispatcher wants them. */
function splitUrl(url: string): { origin: string; path: string } {
  const { origin, pathname, search } = new URL(url);
  return { origin, path: pathname + search };
}

type RawHeaders = Record<string, string | string[] | undefined>;

/** A header by name, repeated values joined as HTTP allows. */
const headerReader = (headers: RawHeaders) => (name: string) => {
  const value = headers[name.toLowerCase()];
  return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
};

/** Chunks a streamed body's reader may be behind by before undici is asked to stop reading the socket. */
const QUEUED_CHUNKS = 16;

/**
 * A streamed body's chunks as undici delivers them, for one reader: undici is paused while the reader is
 * behind and resumed when it catches up, so memory stays bounded whatever the size of the body. A reader
 * that leaves early drops the connection.
 */
class ChunkQueue implements AsyncIterable<Uint8Array> {
  private readonly chunks: Uint8Array[] = [];
  private ended = false;
  private error: Error | undefined;
  private wake: (() => void) | undefined;

  constructor(
    private readonly controller: Dispatcher.DispatchController,
    private readonly cancel: () => void,
  ) {}

  push(chunk: Uint8Array) {
    this.chunks.push(chunk);
    if (this.chunks.length >= QUEUED_CHUNKS) this.controller.pause();
    this.notify();
  }

  end() {
    this.ended = true;
    this.notify();
  }

  fail(error: Error) {
    this.error ??= error;
    this.notify();
  }

  private notify() {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Uint8Array, void, undefined> {
    let finished = false;
    try {
      for (;;) {
        const chunk = this.chunks.shift();
        if (chunk !== undefined) {
          if (this.chunks.length === 0) this.controller.resume();
          yield chunk;
        } else if (this.error) throw this.error;
        else if (this.ended) {
          finished = true;
          return;
        } else await new Promise<void>((resolve) => (this.wake = resolve));
      }
    } finally {
      if (!finished) this.cancel();
    }
  }
}

/**
 * Whether a transport pipelines, learned from the service's answers. Off until an answer shows a kept
 * connection (no `Connection: close`: an HTTP/1.1 server then takes pipelined requests, RFC 9112 section
 * 9.3.2), and off for good once a pipelined request lost its connection before its answer: a server that
 * closes connections under pipelined requests costs a retry each, so one such loss is enough. Off too once
 * a pipelined answer is plainly another request's (outOfStep): a server that answers out of order, or
 * drops one, puts every later answer on its connection on the wrong request.
 */
class Pipelining {
  /** `answered`: an answer without `Connection: close` came, and whether its connection stayed open is not yet seen. */
  private state: 'unknown' | 'answered' | 'on' | 'off' = 'unknown';

  get on(): boolean {
    return this.state === 'on';
  }

  answered(headers: RawHeaders) {
    if (this.state !== 'unknown') return;
    const connection = headers.connection;
    const closes = (Array.isArray(connection) ? connection.join(',') : (connection ?? ''))
      .toLowerCase()
      .split(',')
      .some((token) => token.trim() === 'close');
    if (!closes) this.state = 'answered';
  }

  /**
   * Before a request is routed: an answer without `close` turns pipelining on once a connection is seen
   * open and idle after it. An HTTP/1.0 answer without keep-alive closes its connection and says nothing
   * of it in its headers (undici sees the version; a handler does not), so the headers alone are not enough.
   */
  decide(keptConnection: () => boolean) {
    if (this.state === 'answered') this.state = keptConnection() ? 'on' : 'unknown';
  }

  lost() {
    this.state = 'off';
  }
}

/**
 * One exchange as an undici dispatch handler: the body is decoded as it arrives, straight into text,
 * with no stream, async iterator, AbortSignal or async resource in between (together they were most of
 * a bulk run's client CPU per update). Settles its promise exactly once; later events are ignored. With
 * `stream`, a 2xx answer settles at its headers, and its body is handed over as it arrives (the list).
 */
class Exchange implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  private settled = false;
  private status = 0;
  private headers: RawHeaders = {};
  private readonly body = new BodyText();
  private readonly timer: NodeJS.Timeout | undefined;
  /** For a streamed body: a deadline that counts only the time spent waiting for the service. */
  private readonly deadline: Deadline | undefined;
  private queue: ChunkQueue | undefined;
  /** The request was written whole (undici's onRequestSent): from then on, a write may have been applied. */
  private sent = false;

  constructor(
    private readonly maxBodyBytes: number,
    timeoutMs: number,
    private readonly resolve: (response: TransportResponse) => void,
    private readonly reject: (error: TransportError) => void,
    private readonly proxy: string | undefined,
    stream: boolean,
    /** What this exchange teaches the transport's Pipelining, and whether it was pipelined. */
    private readonly pipelining?: { learn: Pipelining; pipelined: boolean },
  ) {
    const timedOut = () =>
      this.fail(
        new TransportError(
          'timeout',
          'TimeoutError',
          undefined,
          // The status came and the body did not finish in time: the service was reached (issue 21).
          this.status !== 0,
          this.sent && this.status === 0,
        ),
      );
    // One deadline for the whole attempt, the body included; undici's own per-phase timers are too coarse
    // below a second. A request still waiting for a connection fails at once and is dropped when it gets one.
    if (stream) {
      this.deadline = createDeadline(timeoutMs);
      this.deadline.signal.addEventListener('abort', timedOut, { once: true });
    } else this.timer = setTimeout(timedOut, timeoutMs);
  }

  private stopClock() {
    clearTimeout(this.timer);
    this.deadline?.clear();
  }

  private fail(error: TransportError) {
    if (this.queue) {
      // Settled already: the reader of the body learns it.
      this.controller?.abort(error);
      this.queue.fail(error);
      return;
    }
    if (this.settled) return;
    this.settled = true;
    this.stopClock();
    this.controller?.abort(error);
    this.reject(error);
  }

  onRequestSent() {
    this.sent = true;
  }

  onRequestStart(controller: Dispatcher.DispatchController) {
    this.controller = controller;
    if (this.settled) controller.abort(new TransportError('timeout', 'TimeoutError'));
    // A pipelined request whose connection closed before its answer: undici would write it again on
    // another connection, unseen. It was sent and got no answer, so it may have been applied: that is
    // said, and the retry is the client's own, which says so when it succeeds (issue 21).
    else if (this.sent) {
      this.pipelining?.learn.lost();
      // Thrown rather than aborted: undici then drops this request unwritten and fails it (onResponseError),
      // where an abort would also destroy the new connection, and the requests it carries.
      throw new TransportError('network', 'the connection closed before the answer', undefined, false, true);
    }
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: RawHeaders) {
    // 1xx answers are interim: the real one follows.
    if (statusCode < 200 || this.settled) return;
    this.status = statusCode;
    this.headers = headers;
    this.pipelining?.learn.answered(headers);
    const declared = headers['content-length'];
    // Left unread, the body would hold the connection, and petinv's exit, until the deadline.
    if (typeof declared === 'string' && Number(declared) > this.maxBodyBytes) return this.tooLarge();
    if (this.deadline && statusCode < 300) this.startStream(controller);
  }

  private startStream(controller: Dispatcher.DispatchController) {
    const deadline = this.deadline as Deadline;
    const queue = new ChunkQueue(controller, () =>
      controller.abort(new TransportError('network', 'not read')),
    );
    this.queue = queue;
    this.settled = true;
    const header = headerReader(this.headers);
    const body = meteredBody(queue, {
      declaredLength: header('content-length'),
      limit: this.maxBodyBytes,
      deadline,
      discard: () => controller.abort(new TransportError('network', 'not read')),
      describe: (error) => transportError(error, this.proxy, true),
    });
    this.resolve({ status: this.status, header, text: '', body });
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer) {
    if (this.queue) return this.queue.push(chunk);
    if (this.settled) return;
    // Past the limit the body is cut off: the connection is dropped, the rest never read.
    if (!this.body.add(chunk, this.maxBodyBytes)) this.tooLarge();
  }

  onResponseEnd() {
    if (this.queue) return this.queue.end();
    if (this.settled) return;
    this.settled = true;
    this.stopClock();
    const pipelining = this.pipelining;
    this.resolve({
      status: this.status,
      header: headerReader(this.headers),
      text: this.body.text(),
      ...(pipelining?.pipelined && { outOfStep: () => pipelining.learn.lost() }),
    });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error) {
    // Pipelined, sent, and no answer came: the connection broke under it.
    if (this.sent && this.status === 0 && this.pipelining?.pipelined) this.pipelining.learn.lost();
    // A status came first: the service answered, and its body broke off.
    this.fail(transportError(error, this.proxy, this.status !== 0, this.sent));
  }

  private tooLarge() {
    this.fail(
      new TransportError('too large', String(this.maxBodyBytes), undefined, false, false, this.status),
    );
  }
}

/**
 * The transport petinv uses: undici's dispatcher API (an Agent, or a proxy agent) with a handler of its
 * own, which costs a fraction of the request API's or fetch's CPU per request: what lets a bulk run keep
 * up with the server. `proxy` names the proxy the dispatcher goes through, so a failure to reach it is not
 * blamed on the service. With `pipelining` (a bulk run, whose dispatcher has `connections` connections
 * that may each carry several requests), requests that may be pipelined are marked so (undici pipelines
 * nothing else) once the service has shown that it keeps connections (see Pipelining). Until then, and
 * after it stops, one request goes on each connection at a time: at most `connections` are handed to
 * undici at once, and the rest wait here, their clocks not yet started, rather than in undici's queue,
 * where time spent waiting for a connection would count against --timeout.
 */
export function undiciTransport(
  dispatcher: Dispatcher,
  options: { proxy?: string; pipelining?: { connections: number } } = {},
): Transport {
  const pipelining = options.pipelining ? new Pipelining() : undefined;
  const limit = options.pipelining?.connections;
  /** Requests handed to undici and not yet settled, pipelined or not. */
  let active = 0;
  const waiting: (() => void)[] = [];
  // A connection of the dispatcher open with nothing on it; without stats (a proxy agent), the answer's
  // headers are taken at their word.
  const keptConnection = (origin: string) => () => {
    const stats = (dispatcher as { stats?: Record<string, { connected: number; running: number }> }).stats;
    const pool = stats?.[origin];
    return stats === undefined || (pool !== undefined && pool.connected > pool.running);
  };
  const drain = () => {
    while (waiting.length > 0 && (pipelining?.on === true || active < (limit as number)))
      (waiting.shift() as () => void)();
  };
  return (request) =>
    new Promise((resolve, reject) => {
      const { origin, path } =
        request.origin !== undefined && request.path !== undefined
          ? { origin: request.origin, path: request.path }
          : splitUrl(request.url);
      const { method, headers, body } = request;
      const start = () => {
        pipelining?.decide(keptConnection(origin));
        // undici pipelines only requests marked idempotent and not `blocking`; a streamed body (the list)
        // may take long, and would hold up what waits behind it. Everything else goes as it always went.
        const pipelines = pipelining?.on === true && request.idempotent === true && request.stream !== true;
        let done = (): void => {};
        if (limit !== undefined) {
          if (!pipelines && active >= limit) {
            waiting.push(start);
            return;
          }
          active++;
          done = () => {
            done = () => {};
            active--;
            // Once undici is done with the answer's connection: kept or closed, as keptConnection sees it.
            queueMicrotask(drain);
          };
        }
        const exchange = new Exchange(
          request.maxBodyBytes ?? Number.POSITIVE_INFINITY,
          request.timeoutMs,
          (response) => {
            resolve(response);
            done();
          },
          (error) => {
            reject(error);
            done();
          },
          options.proxy,
          request.stream === true,
          pipelining && { learn: pipelining, pipelined: pipelines },
        );
        try {
          dispatcher.dispatch(
            {
              origin,
              path,
              method: method as Dispatcher.HttpMethod,
              headers,
              body,
              ...(pipelines && { idempotent: true, blocking: false }),
            },
            exchange,
          );
        } catch (error) {
          // A request the dispatcher refuses outright (a closed agent, an invalid header).
          exchange.onResponseError(undefined as never, error as Error);
        }
      };
      start();
    });
}
