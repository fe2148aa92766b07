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
  /** Hand a 2xx answer's body over as it arrives, as `body` (see exchange.ts); other answers are read as text. */
  stream?: boolean;
  /**
   * Sent twice, it has the effect of once: it may be pipelined behind another request (undici pipelines no
   * other kind). Both of the service's operations are: a read, and a PATCH of an absolute quantity.
   */
  idempotent?: boolean;
}

export interface TransportResponse {
  status: number;
  header(name: string): string | null;
  text: string;
  /** The body as it arrives, when the request asked for a stream and the status is 2xx (`text` is then empty). */
  body?: AsyncIterable<Uint8Array>;
  /**
   * Told by the caller when the answer is plainly another request's (a PATCH answered for another pet):
   * on a pipelined connection the answers are then out of step with the requests, and the transport
   * pipelines no more. Absent where nothing is pipelined.
   */
  outOfStep?: () => void;
}

export type Transport = (request: TransportRequest) => Promise<TransportResponse>;

export const isSuccessStatus = (status: number | null | undefined): status is number =>
  status !== null && status !== undefined && status >= 200 && status <= 299;

/**
 * A request that got no usable HTTP answer: `timeout` (the body included), `tls` (an untrusted
 * certificate), `too large` (past maxBodyBytes, the detail the limit), else `network` with the cause.
 */
export class TransportError extends Error {
  constructor(
    readonly reason: 'timeout' | 'network' | 'tls' | 'too large',
    readonly detail: string,
    /** What could not be reached when it was not the service itself: the proxy, as messages name it. */
    readonly unreachable?: string,
    /** A network failure after the answer's status and headers came: the service was reached, its body broke off. */
    readonly brokeOff = false,
    /**
     * The request had been written whole when it failed, and no answer came: the service may have acted on
     * it (a write may have been applied). False when it never left, or when the answer's status came.
     */
    readonly sent = false,
    /** The answer's status, for a body too large to read: a write answered with a success may have been applied. */
    readonly status?: number,
  ) {
    super(detail);
  }
}
