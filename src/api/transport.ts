import { StringDecoder } from 'node:string_decoder';
import { createDeadline, type Deadline, meteredBody } from './body-stream';
import type { Dispatcher } from './undici';

/** One HTTP exchange, as the client needs it: the transport knows HTTP, the client knows the contract. */
export interface TransportRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** For the whole attempt: connecting, waiting for headers, and reading the body. */
  timeoutMs: number;
  /** A response body larger than this many bytes is cut off with a `too large` TransportError. */
  maxBodyBytes?: number;
  /**
   * The url split as a dispatcher wants it, when the caller has it already: the client splits its base
   * URL once, so a bulk run parses no URL per request. Without them the transport parses `url`.
   */
  origin?: string;
  path?: string;
  /** Hand a 2xx answer's body over unread, as `body` (see body-stream.ts); other answers are read as text. */
  stream?: boolean;
}

export interface TransportResponse {
  status: number;
  header(name: string): string | null;
  text: string;
  /** The body as it arrives, when the request asked for a stream and the status is 2xx (`text` is then empty). */
  body?: AsyncIterable<Uint8Array>;
}

export type Transport = (request: TransportRequest) => Promise<TransportResponse>;

/**
 * A request that got no usable HTTP answer: `timeout` when it took too long (the body included), `tls`
 * when the certificate could not be trusted (not worth retrying), `too large` when the body passed
 * maxBodyBytes (the detail is the limit), else `network` with the cause.
 */
export class TransportError extends Error {
  constructor(
    readonly reason: 'timeout' | 'network' | 'tls' | 'too large',
    readonly detail: string,
    /** What could not be reached when it was not the service itself: the proxy, as messages name it. */
    readonly unreachable?: string,
  ) {
    super(detail);
  }
}

/**
 * A body decoded to text as it arrives, bounded: nothing is copied whole more than once (the pieces,
 * then the text). A StringDecoder, unlike a TextDecoder, costs next to nothing to make for each answer.
 */
class BodyText {
  private readonly decoder = new StringDecoder('utf8');
  private readonly pieces: string[] = [];
  private size = 0;

  /** Takes one more chunk; false (and nothing kept) once the body passes `limit` bytes. */
  add(chunk: Uint8Array, limit: number): boolean {
    this.size += chunk.byteLength;
    if (this.size > limit) return false;
    this.pieces.push(this.decoder.write(chunk));
    return true;
  }

  text(): string {
    this.pieces.push(this.decoder.end());
    return this.pieces.length === 2 ? `${this.pieces[0]}${this.pieces[1]}` : this.pieces.join('');
  }
}

/**
 * Reads a body as text, chunk by chunk, stopping as soon as it passes the limit: a huge or endless
 * body costs at most the limit.
 */
async function readText(
  chunks: AsyncIterable<Uint8Array>,
  declaredLength: string | null,
  limit: number,
  /** Drops a body that will not be read. */
  discard: () => void,
): Promise<string> {
  const tooLarge = () => new TransportError('too large', String(limit));
  if (declaredLength !== null && Number(declaredLength) > limit) {
    // Left unread, the body would hold the connection, and petinv's exit, until the deadline.
    discard();
    throw tooLarge();
  }
  const body = new BodyText();
  for await (const chunk of chunks) {
    // Leaving the loop cancels the body: the rest is never read.
    if (!body.add(chunk, limit)) throw tooLarge();
  }
  return body.text();
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
/** Failures to open a connection at all: through a proxy, the connection that failed is the proxy's. */
const CONNECT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
const TLS_PROBLEMS: Record<string, string> = {
  DEPTH_ZERO_SELF_SIGNED_CERT: 'a self-signed certificate',
  SELF_SIGNED_CERT_IN_CHAIN: 'a certificate chain ending in an untrusted self-signed certificate',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'a certificate from an unknown authority',
  UNABLE_TO_GET_ISSUER_CERT: 'a certificate from an unknown authority',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'a certificate from an unknown authority',
  CERT_HAS_EXPIRED: 'an expired certificate',
  CERT_NOT_YET_VALID: 'a certificate that is not valid yet',
  ERR_TLS_CERT_ALTNAME_INVALID: 'a certificate for another host name',
  ERR_SSL_WRONG_VERSION_NUMBER: 'no TLS at all (is it an http:// address?)',
};

/** The certificate problem behind a TLS failure, or undefined when the failure is not about TLS. */
function tlsProblem(code: string): string | undefined {
  const known = TLS_PROBLEMS[code];
  if (known) return `${known} (${code})`;
  if (code.startsWith('CERT_') || code.endsWith('_CERT') || code.startsWith('ERR_SSL_'))
    return `a certificate or TLS handshake it cannot verify (${code})`;
  return undefined;
}

function transportError(error: unknown, proxy?: string): TransportError {
  if (error instanceof TransportError) return error;
  const { code, name, message, cause } = error as {
    code?: string;
    name?: string;
    message?: string;
    cause?: { code?: string; message?: string };
  };
  if (name === 'TimeoutError') return new TransportError('timeout', name);
  if (code && TIMEOUT_CODES.has(code)) return new TransportError('timeout', code);
  // undici wraps a failed TLS handshake with an https proxy; fetch wraps everything in `cause`.
  const rootCode = code === 'UND_ERR_PRX_TLS' || code === undefined ? (cause?.code ?? code) : code;
  const tls = rootCode ? tlsProblem(rootCode) : undefined;
  if (tls) return new TransportError('tls', tls, code === 'UND_ERR_PRX_TLS' ? proxy : undefined);
  if (proxy) {
    if (rootCode && CONNECT_CODES.has(rootCode)) return new TransportError('network', rootCode, proxy);
    const refused = /^Proxy response \((\d+)\)/.exec(message ?? '');
    if (refused) return new TransportError('network', `${proxy} answered ${refused[1]} to CONNECT`);
  }
  return new TransportError('network', cause?.code ?? code ?? cause?.message ?? message ?? String(error));
}

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

  constructor(
    private readonly maxBodyBytes: number,
    timeoutMs: number,
    private readonly resolve: (response: TransportResponse) => void,
    private readonly reject: (error: TransportError) => void,
    private readonly proxy: string | undefined,
    stream: boolean,
  ) {
    const timedOut = () => this.fail(new TransportError('timeout', 'TimeoutError'));
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

  onRequestStart(controller: Dispatcher.DispatchController) {
    this.controller = controller;
    if (this.settled) controller.abort(new TransportError('timeout', 'TimeoutError'));
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: RawHeaders) {
    // 1xx answers are interim: the real one follows.
    if (statusCode < 200 || this.settled) return;
    this.status = statusCode;
    this.headers = headers;
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
      describe: (error) => transportError(error, this.proxy),
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
    this.resolve({ status: this.status, header: headerReader(this.headers), text: this.body.text() });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error) {
    this.fail(transportError(error, this.proxy));
  }

  private tooLarge() {
    this.fail(new TransportError('too large', String(this.maxBodyBytes)));
  }
}

/**
 * The transport petinv uses: undici's dispatcher API (an Agent, or a proxy agent) with a handler of its
 * own, which costs a fraction of the request API's or fetch's CPU per request: what lets a bulk run keep
 * up with the server. `proxy` names the proxy the dispatcher goes through, so a failure to reach it is not
 * blamed on the service.
 */
export function undiciTransport(dispatcher: Dispatcher, options: { proxy?: string } = {}): Transport {
  return (request) =>
    new Promise((resolve, reject) => {
      const { origin, path } =
        request.origin !== undefined && request.path !== undefined
          ? { origin: request.origin, path: request.path }
          : splitUrl(request.url);
      const exchange = new Exchange(
        request.maxBodyBytes ?? Number.POSITIVE_INFINITY,
        request.timeoutMs,
        resolve,
        reject,
        options.proxy,
        request.stream === true,
      );
      try {
        const { method, headers, body } = request;
        dispatcher.dispatch(
          { origin, path, method: method as Dispatcher.HttpMethod, headers, body },
          exchange,
        );
      } catch (error) {
        // A request the dispatcher refuses outright (a closed agent, an invalid header).
        exchange.onResponseError(undefined as never, error as Error);
      }
    });
}

/**
 * The same exchange over a WHATWG fetch: for runtimes and tests that intercept fetch (nock does; it
 * cannot see undici's request API).
 */
export function fetchTransport(fetchImpl: typeof fetch = globalThis.fetch): Transport {
  return async ({
    method,
    url,
    headers,
    body,
    timeoutMs,
    maxBodyBytes = Number.POSITIVE_INFINITY,
    stream,
  }) => {
    const deadline = stream ? createDeadline(timeoutMs) : undefined;
    const signal = deadline?.signal ?? AbortSignal.timeout(timeoutMs);
    try {
      const response = await fetchImpl(url, {
        method,
        headers,
        body,
        signal,
        // Never followed: the Authorization header would go along to wherever the redirect points.
        redirect: 'manual',
      });
      const header = (name: string) => response.headers.get(name);
      if (deadline && response.ok && response.body) {
        const chunks = meteredBody(response.body as unknown as AsyncIterable<Uint8Array>, {
          declaredLength: header('content-length'),
          limit: maxBodyBytes,
          deadline,
          discard: () => void response.body?.cancel().catch(() => {}),
          describe: (error) => transportError(signal.aborted ? signal.reason : error),
        });
        return { status: response.status, header, text: '', body: chunks };
      }
      const text = response.body
        ? await readText(
            response.body as unknown as AsyncIterable<Uint8Array>,
            header('content-length'),
            maxBodyBytes,
            () => void response.body?.cancel().catch(() => {}),
          )
        : '';
      deadline?.clear();
      return { status: response.status, header, text };
    } catch (error) {
      deadline?.clear();
      throw transportError(error);
    }
  };
}
