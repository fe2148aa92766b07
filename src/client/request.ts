import { headerText } from '../printable';
import type { ClientErrors } from './client-errors';
import { type Attempts, type RetryPolicy, retrying } from './retry';
import { isSuccessStatus, type Transport, type TransportError, type TransportResponse } from './transport';
import { refusesTheRequestItself } from './write-outcome';

/**
 * The client's requests in layers, each testable alone (as restish stacks its transports): a call judges
 * the final answer by the contract (this file); retry.ts sends attempts again; the transport carries them.
 */

/** The base URL's origin and path, split once; undefined for one the transport parses (a query or fragment). */
function splitBaseUrl(baseUrl: string): { origin: string; basePath: string } | undefined {
  if (!URL.canParse(baseUrl)) return undefined;
  const { origin, pathname, search, hash } = new URL(baseUrl);
  return search === '' && hash === '' && `${origin}${pathname}` === baseUrl
    ? { origin, basePath: pathname }
    : undefined;
}

/** Everything a client's requests share, its defaults already applied. */
export interface RequestSettings extends RetryPolicy {
  /** Without a trailing slash. */
  baseUrl: string;
  apiKey: string;
  userAgent?: string;
  /** The environment's name, or the base URL, for messages. */
  where: string;
  timeoutMs: number;
  maxBodyBytes: number;
  transport: Transport;
  onWarning?: (message: string) => void;
  errors: ClientErrors;
}

/** What one request may add: a conditional GET, or a reader of a streamed 2xx (or 304) answer. */
interface CallOptions<T> {
  /** Sent as If-None-Match; a 304 is then an answer (handed to `read`), else a broken contract. */
  ifNoneMatch?: string;
  /**
   * Makes what the caller needs of the answer, its body streamed: a network failure or timeout while it
   * runs is retried like one before the answer, so `read` takes only what can still be taken back.
   */
  read?: (response: TransportResponse) => Promise<T>;
  /**
   * For a write: what to do when its outcome is unknown (an attempt sent whole got no answer), in the error
   * that says so; told, when a later attempt succeeds, that an earlier one may have applied (outcomeUnknown).
   */
  unknownOutcome?: {
    advice(): string;
    onSettled(lost: TransportError): void;
    /** Whether a refusal, checked by the caller, shows the lost attempt's effect in place: then it settles. */
    confirmsDone?(response: TransportResponse): Promise<boolean>;
  };
  /** Headers of this request (one with a body) beside the usual ones. */
  headers?: Readonly<Record<string, string>>;
  /** The caller's own failure for an answer that is no success, when it has one (else the usual). */
  refused?: (response: TransportResponse) => Error | undefined;
}

/** One request with its retries: the answer, or with `read`, what `read` makes of it. */
export type Call = <T = TransportResponse>(
  method: string,
  path: string,
  body?: string,
  subject?: string,
  options?: CallOptions<T>,
) => Promise<T>;

/** The transport, with one warning per distinct Deprecation or Sunset header its answers carry. */
function noticingDeprecation(
  transport: Transport,
  { baseUrl, where, errors, onWarning }: RequestSettings,
): Transport {
  const warned = new Set<string>();
  const notice = (operation: string, response: TransportResponse) => {
    const deprecation = response.header('deprecation');
    const sunset = response.header('sunset');
    if (deprecation === null && sunset === null) return;
    const parts = [
      deprecation !== null && `Deprecation: ${errors.shown(headerText(deprecation), 80)}`,
      sunset !== null && `Sunset: ${errors.shown(headerText(sunset), 80)}`,
    ].filter(Boolean);
    const message = `${operation} is deprecated by the service in ${where} (${parts.join('; ')}); it may stop working`;
    if (warned.has(message)) return;
    warned.add(message);
    onWarning?.(message);
  };
  return async (request) => {
    const response = await transport(request);
    notice(`${request.method} ${request.url.slice(baseUrl.length)}`, response);
    return response;
  };
}

/** The requests of one client: auth, timeouts, retries, and one warning per Deprecation header. */
export function createCall(settings: RequestSettings): Call {
  const { baseUrl, apiKey, userAgent, timeoutMs, maxBodyBytes, errors, maxRetryWaitMs } = settings;
  const transport = noticingDeprecation(settings.transport, settings);
  // Built once: the bulk path sends thousands of requests.
  const headers: Record<string, string> = {
    Authorization: `Bearer ${apiKey}`,
    Accept: 'application/json',
    ...(userAgent ? { 'User-Agent': userAgent } : {}),
  };
  const headersWithBody = { ...headers, 'Content-Type': 'application/json' };
  const split = splitBaseUrl(baseUrl);

  async function call<T>(
    method: string,
    path: string,
    body?: string,
    subject?: string,
    { ifNoneMatch, read, unknownOutcome, refused, ...options }: CallOptions<T> = {},
  ): Promise<T | TransportResponse> {
    const operation = `${method} ${path}`;
    const url = `${baseUrl}${path}`;
    const request = {
      method,
      url,
      origin: split?.origin,
      path: split && split.basePath + path,
      headers:
        ifNoneMatch !== undefined
          ? { ...headers, 'If-None-Match': ifNoneMatch }
          : body === undefined
            ? headers
            : options.headers
              ? { ...headersWithBody, ...options.headers }
              : headersWithBody,
      body,
      timeoutMs,
      maxBodyBytes,
      stream: read !== undefined,
      // Every request of the service's API: GET reads, PATCH sets an absolute quantity.
      idempotent: true,
    };
    const attempts: Attempts = { made: 0 };
    /** One attempt: the answer, read within the attempt when it is one to read, so a body that breaks is retried. */
    const attempt = async (): Promise<TransportResponse & { value?: T }> => {
      const response = await transport(request);
      // A 304 is an answer to read only when the request was conditional (the reader checks its ETag).
      const notModified = response.status === 304 && ifNoneMatch !== undefined;
      if (!read || !(notModified || isSuccessStatus(response.status))) return response;
      return { ...response, value: await read(response) };
    };
    let response: TransportResponse & { value?: T };
    try {
      response = await retrying(settings, operation, attempt, attempts);
    } catch (error) {
      throw errors.afterAttempts(error, operation, url, attempts, unknownOutcome);
    }
    const { status } = response;
    // An earlier attempt may have been applied: unless this answer is a refusal that would have met it too
    // (of the request itself), that is still not known, whatever else it says (a redirect, a 409, a 5xx).
    if (unknownOutcome && attempts.lost && !isSuccessStatus(status) && !refusesTheRequestItself(status)) {
      if (await unknownOutcome.confirmsDone?.(response).catch(() => false)) {
        unknownOutcome.onSettled(attempts.lost);
        return response;
      }
      throw errors.outcomeUnknown(
        operation,
        attempts.lost,
        ` (then answered ${status} to attempt ${attempts.made})`,
        unknownOutcome.advice(),
      );
    }
    if (status === 304 && ifNoneMatch === undefined)
      throw errors.contractError(
        operation,
        'it answered 304 Not Modified to a request that was not conditional',
      );
    if (status >= 300 && status < 400 && status !== 304)
      throw errors.redirected(operation, url, path, response);
    if (!isSuccessStatus(status) && status !== 304) {
      const own = refused?.(response);
      if (own) throw own;
      const refusedWait =
        attempts.refusedWaitMs !== undefined &&
        `it asked for ${Math.ceil(attempts.refusedWaitMs / 1000)}s more before a retry, past the ${maxRetryWaitMs / 1000}s petinv waits in all (--max-retry-wait, PETINV_MAX_RETRY_WAIT); raise it, or try again later`;
      throw await errors.failure(operation, status, response.text, subject, refusedWait || undefined);
    }
    // A write that succeeded after an attempt that may have been applied says so.
    if (unknownOutcome && attempts.lost) unknownOutcome.onSettled(attempts.lost);
    return read ? (response.value as T) : response;
  }
  return call as Call;
}
