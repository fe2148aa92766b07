import { headerText } from '../printable';
import { type ClientErrors, confirms, StaleTagError } from './client-errors';
import { isSuccessStatus, type Transport, TransportError, type TransportResponse } from './transport';

export interface RetryWait {
  operation: string;
  ms: number;
  /** The HTTP status that asked for the retry; undefined after a network error or a timeout. */
  status?: number;
  /** True when the service said how long to wait (Retry-After). */
  retryAfter: boolean;
}

const RETRYABLE_STATUSES = new Set([429, 502, 503, 504]);

/**
 * Refusals of the request itself (its form, target, size or media type): the same request, sent before and
 * lost, would have been refused alike, so after a lost attempt they still mean "not applied". Any other
 * refusal (a 401 or 403: the key may have been revoked after the lost attempt was applied; 409, 412, an
 * unknown 4xx, a 5xx) may be about what happened since, and a redirect says nothing of what became of the
 * lost attempt (it may have been applied before the move).
 */
const REFUSES_THE_REQUEST_ITSELF = new Set([400, 404, 405, 406, 411, 413, 414, 415, 422, 431]);

/** When a retry may go: Retry-After (seconds or an HTTP date), else exponential backoff with full jitter. */
export function retryDelayMs(
  attempt: number,
  retryAfter: string | null,
  random: () => number,
  now = Date.now(),
): { ms: number; retryAfter: boolean } {
  if (retryAfter !== null) {
    const trimmed = retryAfter.trim();
    // Seconds, or an HTTP date (which starts with the day's name; Date.parse alone takes "-5" as a year).
    const ms = /^\d+$/.test(trimmed)
      ? Number(trimmed) * 1000
      : /^[a-z]/i.test(trimmed)
        ? Date.parse(trimmed) - now
        : Number.NaN;
    if (Number.isFinite(ms)) return { ms: Math.max(ms, 0), retryAfter: true };
  }
  return { ms: Math.round(random() * Math.min(200 * 2 ** attempt, 5000)), retryAfter: false };
}

/**
 * The base URL's origin and path, split once so that no request parses a URL; undefined for one the
 * transport should parse itself each time, as before (not a URL, or with a query or fragment).
 */
function splitBaseUrl(baseUrl: string): { origin: string; basePath: string } | undefined {
  if (!URL.canParse(baseUrl)) return undefined;
  const { origin, pathname, search, hash } = new URL(baseUrl);
  return search === '' && hash === '' && `${origin}${pathname}` === baseUrl
    ? { origin, basePath: pathname }
    : undefined;
}

/** Everything a client's requests share, its defaults already applied. */
export interface RequestSettings {
  /** Without a trailing slash. */
  baseUrl: string;
  apiKey: string;
  userAgent?: string;
  /** The environment's name, or the base URL, for messages. */
  where: string;
  timeoutMs: number;
  retries: number;
  maxBodyBytes: number;
  maxRetryWaitMs: number;
  transport: Transport;
  sleep: (ms: number) => Promise<void>;
  random: () => number;
  onRetryWait?: (wait: RetryWait) => void;
  onWarning?: (message: string) => void;
  errors: ClientErrors;
}

/** What one request may add: a conditional GET, or a reader of a streamed 2xx (or 304) answer. */
export interface CallOptions<T> {
  /** Sent as If-None-Match; a 304 is then an answer (handed to `read`), else a broken contract. */
  ifNoneMatch?: string;
  /**
   * Makes what the caller needs of the answer, its body streamed: a network failure or timeout while it
   * runs is retried like one before the answer, so `read` takes only what can still be taken back.
   */
  read?: (response: TransportResponse) => Promise<T>;
  /**
   * For a write: what to do when its outcome is unknown (an attempt was sent whole and no answer came), in
   * the error that says so; and told, when a later attempt succeeds, that one before it may have been
   * applied (see ClientErrors.outcomeUnknown).
   */
  unknownOutcome?: { advice(): string; onSettled(lost: TransportError): void };
}

/** One request with its retries: the answer, or with `read`, what `read` makes of it. */
export interface Call {
  <T>(
    method: string,
    path: string,
    body: string | undefined,
    subject: string | undefined,
    options: CallOptions<T> & { read: (response: TransportResponse) => Promise<T> },
  ): Promise<T>;
  (
    method: string,
    path: string,
    body?: string,
    subject?: string,
    options?: Omit<CallOptions<never>, 'read'>,
  ): Promise<TransportResponse>;
}

/**
 * The waits between the attempts of one request, within the budget (--max-retry-wait), and the error the
 * user sees when no attempt is left.
 */
function retryPlan(
  settings: RequestSettings,
  operation: string,
  url: string,
  unknownOutcome: CallOptions<unknown>['unknownOutcome'],
) {
  const { retries, maxRetryWaitMs, random, errors } = settings;
  let waitedMs = 0;
  /** The first attempt of a write that was sent whole and got no answer: it may have been applied. */
  let lost: TransportError | undefined;
  // The wait a Retry-After asked for that the budget refused, for the message.
  let lastRefusedWaitMs: number | undefined;
  /** Waits before the next attempt, unless that would pass the budget; false means give up. */
  const waitToRetry = async (attempt: number, response?: TransportResponse): Promise<boolean> => {
    if (attempt >= retries) return false;
    const delay = retryDelayMs(attempt, response?.header('retry-after') ?? null, random);
    if (waitedMs + delay.ms > maxRetryWaitMs) {
      if (delay.retryAfter) lastRefusedWaitMs = delay.ms;
      return false;
    }
    waitedMs += delay.ms;
    settings.onRetryWait?.({
      operation,
      ms: delay.ms,
      status: response?.status,
      retryAfter: delay.retryAfter,
    });
    await settings.sleep(delay.ms);
    return true;
  };
  /** Returns once it has waited for another attempt; throws the error the user sees when none is left. */
  const retryOrThrow = async (error: unknown, attempt: number): Promise<void> => {
    if (!(error instanceof TransportError)) throw error;
    // A write whose answer broke off after its status came was reached and read too: it may have been
    // applied as much as one that got no answer at all.
    if (unknownOutcome && (error.sent || error.brokeOff)) lost ??= error;
    // The same certificate will be presented again: retrying cannot help.
    if (error.reason === 'tls') throw errors.untrusted(error, url);
    // A write answered with a success whose body is too large to read may have been applied (issue 21).
    if (error.reason === 'too large')
      throw errors.tooLarge(
        operation,
        unknownOutcome && isSuccessStatus(error.status)
          ? { status: error.status, advice: unknownOutcome.advice() }
          : undefined,
      );
    if (await waitToRetry(attempt)) return;
    const attempts = attempt === 0 ? '' : ` after ${attempt + 1} attempts`;
    // Once a write may have been applied, "cannot reach" (or any other failure of a later attempt) would
    // say less than the truth: the outcome is unknown (issue 21).
    if (unknownOutcome && lost)
      throw errors.outcomeUnknown(operation, lost, attempts, unknownOutcome.advice());
    // The service was reached: "cannot reach" would send the user looking in the wrong place.
    if (error.reason === 'network' && error.brokeOff) throw errors.brokenAnswer(operation, error, attempts);
    if (error.reason === 'network' && error.sent && !error.unreachable)
      throw errors.brokeAfterSending(operation, error, attempts);
    throw errors.unreachable(error, url, attempts);
  };
  /** Advice for a failure that came after the budget refused a wait the service asked for. */
  const refusedWaitAdvice = () =>
    lastRefusedWaitMs === undefined
      ? undefined
      : `it asked for ${Math.ceil(lastRefusedWaitMs / 1000)}s more before a retry, past the ${maxRetryWaitMs / 1000}s petinv waits in all (--max-retry-wait, PETINV_MAX_RETRY_WAIT); raise it, or try again later`;
  /** After a successful answer: a write that may have been applied by an earlier attempt says so. */
  const settled = () => {
    if (unknownOutcome && lost) unknownOutcome.onSettled(lost);
  };
  return { waitToRetry, retryOrThrow, refusedWaitAdvice, settled, lostAttempt: () => lost };
}

/** One warning per distinct Deprecation or Sunset header a client meets. */
function deprecationNotices(
  where: string,
  errors: ClientErrors,
  onWarning: ((message: string) => void) | undefined,
) {
  const warned = new Set<string>();
  return (operation: string, response: TransportResponse) => {
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
}

/** Makes each request's transport request; the headers are built once, as the bulk path sends thousands. */
function requestBuilder({ baseUrl, apiKey, userAgent, timeoutMs, maxBodyBytes }: RequestSettings) {
  const headers: Record<string, string> = {
    Authorization: `Bearer ${apiKey}`,
    Accept: 'application/json',
    ...(userAgent ? { 'User-Agent': userAgent } : {}),
  };
  const headersWithBody = { ...headers, 'Content-Type': 'application/json' };
  const split = splitBaseUrl(baseUrl);
  return (method: string, path: string, body: string | undefined, ifNoneMatch?: string, stream = false) => ({
    method,
    url: `${baseUrl}${path}`,
    origin: split?.origin,
    path: split && split.basePath + path,
    headers:
      ifNoneMatch !== undefined
        ? { ...headers, 'If-None-Match': ifNoneMatch }
        : body === undefined
          ? headers
          : headersWithBody,
    body,
    timeoutMs,
    maxBodyBytes,
    stream,
    // Every request of the service's API: GET reads, PATCH sets an absolute quantity.
    idempotent: true,
  });
}

/** The requests of one client: auth, timeouts, retries, and one warning per Deprecation header. */
export function createCall(settings: RequestSettings): Call {
  const { transport, errors } = settings;
  const noticeDeprecation = deprecationNotices(settings.where, settings.errors, settings.onWarning);
  const buildRequest = requestBuilder(settings);

  async function call<T>(
    method: string,
    path: string,
    body?: string,
    subject?: string,
    { ifNoneMatch, read, unknownOutcome }: CallOptions<T> = {},
  ): Promise<T | TransportResponse> {
    const operation = `${method} ${path}`;
    const request = buildRequest(method, path, body, ifNoneMatch, read !== undefined);
    const { url } = request;
    const retry = retryPlan(settings, operation, url, unknownOutcome);
    for (let attempt = 0; ; attempt++) {
      let response: TransportResponse;
      try {
        response = await transport(request);
      } catch (error) {
        await retry.retryOrThrow(error, attempt);
        continue;
      }
      if (RETRYABLE_STATUSES.has(response.status) && (await retry.waitToRetry(attempt, response))) continue;
      noticeDeprecation(operation, response);
      // An earlier attempt may have been applied: unless this answer is a refusal that would have met it too
      // (of the request itself), that is still not known, whatever else it says (a redirect, a 409, a 5xx).
      if (
        unknownOutcome &&
        !isSuccessStatus(response.status) &&
        !REFUSES_THE_REQUEST_ITSELF.has(response.status) &&
        retry.lostAttempt()
      )
        throw errors.outcomeUnknown(
          operation,
          retry.lostAttempt() as TransportError,
          ` (then answered ${response.status} to attempt ${attempt + 1})`,
          unknownOutcome.advice(),
        );
      if (response.status === 304 && ifNoneMatch === undefined)
        throw errors.contractError(
          operation,
          'it answered 304 Not Modified to a request that was not conditional',
        );
      if (response.status === 304 && !confirms(response.header('etag'), ifNoneMatch as string))
        throw new StaleTagError(operation);
      if (response.status === 304) {
        // Not modified: what the caller holds still stands.
      } else if (response.status >= 300 && response.status < 400)
        throw errors.redirected(operation, url, path, response);
      else if (!isSuccessStatus(response.status)) {
        throw await errors.failure(
          operation,
          response.status,
          response.text,
          subject,
          retry.refusedWaitAdvice(),
        );
      }
      retry.settled();
      if (!read) return response;
      try {
        return await read(response);
      } catch (error) {
        await retry.retryOrThrow(error, attempt);
      }
    }
  }
  return call as Call;
}
