import { type ErrorKind, PetinvError, type ServiceErrorBody } from '../errors';
import { printable } from '../printable';
import {
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_RETRY_WAIT_MS,
  DEFAULT_RETRIES,
  DEFAULT_TIMEOUT_MS,
  formatBytes,
} from './defaults';
import { InventoryStreamError, parseInventoryStream } from './inventory-stream';
import { parseInventoryJson, readCanonicalItem, serializeUpdate } from './json';
import { type CachedList, type CacheWriter, copiedInto, isCacheableEtag, type ListCache } from './list-cache';
import { ApiError, describeIssues, type InventoryItem, InventoryItemResponse } from './schemas';
import { type Transport, TransportError, type TransportResponse } from './transport';

export interface ClientOptions {
  /** The service's base address, ending in /v1. */
  baseUrl: string;
  apiKey: string;
  /** The environment's name, for messages that say where something failed. */
  envName?: string;
  /** Per attempt, connection included. */
  timeoutMs?: number;
  /** Further attempts after a network error, a timeout, 429, 502, 503 or 504. */
  retries?: number;
  userAgent?: string;
  /** How requests travel: undiciTransport in petinv, fetchTransport where fetch is intercepted. */
  transport: Transport;
  /** A response body larger than this is cut off with an error (default DEFAULT_MAX_BODY_BYTES). */
  maxBodyBytes?: number;
  /** All the waiting between the attempts of one request, Retry-After included; past it, give up. */
  maxRetryWaitMs?: number;
  /** Told before each wait between attempts, as it starts. */
  onRetryWait?: (wait: RetryWait) => void;
  /** Told once per distinct warning, such as a Deprecation header. */
  onWarning?: (message: string) => void;
  /** What to do when the service refuses the key (401, 403); by default, to log in to `envName` again. */
  refusedKeyAdvice?: string;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  /** The last list and its ETag, revalidated by every listInventory (src/api/list-cache.ts); none by default. */
  listCache?: ListCache;
}

/** A conditional GET /inventory: the items when they changed since the ETag given, with their new ETag. */
export type InventoryPoll = { changed: false } | { changed: true; items: InventoryItem[]; etag?: string };

export interface InventoryClient {
  /** The whole list, revalidated against the list cache when the client has one. */
  listInventory(): Promise<InventoryItem[]>;
  /** The list only if it changed since `etag` (If-None-Match; a 304 is `changed: false`); no list cache. */
  pollInventory(etag: string | undefined): Promise<InventoryPoll>;
  /**
   * GET /inventory as it arrives: batches of items, each checked against the contract before it is
   * handed out. A failure before the first batch is retried like any other; once a batch was handed
   * out, a failure ends the iteration with a server error (exit 8). Stopping early cancels the answer.
   */
  streamInventory(): AsyncIterable<InventoryItem[]>;
  /** PATCH /inventory/{petId}: sets an absolute quantity, so a retry cannot double-count. */
  updateInventory(petId: bigint, quantity: number): Promise<InventoryItem>;
}

export interface RetryWait {
  operation: string;
  ms: number;
  /** The HTTP status that asked for the retry; undefined after a network error or a timeout. */
  status?: number;
  /** True when the service said how long to wait (Retry-After). */
  retryAfter: boolean;
}

const RETRYABLE_STATUSES = new Set([429, 502, 503, 504]);

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

function kindOfStatus(status: number): ErrorKind {
  if (status === 401 || status === 403) return 'auth';
  if (status === 404) return 'notFound';
  if (status >= 400 && status < 500 && status !== 408 && status !== 429) return 'rejected';
  return 'server';
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

/** The HTTP client of the inventory service: auth, timeouts, retries, and every answer checked against the contract. */
export function createClient(options: ClientOptions): InventoryClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const where = options.envName ?? baseUrl;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const retries = options.retries ?? DEFAULT_RETRIES;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const maxRetryWaitMs = options.maxRetryWaitMs ?? DEFAULT_MAX_RETRY_WAIT_MS;
  const { transport } = options;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const random = options.random ?? Math.random;
  const warned = new Set<string>();
  const headers: Record<string, string> = {
    Authorization: `Bearer ${options.apiKey}`,
    Accept: 'application/json',
    ...(options.userAgent ? { 'User-Agent': options.userAgent } : {}),
  };
  const headersWithBody = { ...headers, 'Content-Type': 'application/json' };
  const split = splitBaseUrl(baseUrl);

  function warnOnce(message: string) {
    if (warned.has(message)) return;
    warned.add(message);
    options.onWarning?.(message);
  }

  function noticeDeprecation(operation: string, response: TransportResponse) {
    const deprecation = response.header('deprecation');
    const sunset = response.header('sunset');
    if (deprecation === null && sunset === null) return;
    const parts = [
      deprecation !== null && `Deprecation: ${printable(deprecation, 80)}`,
      sunset !== null && `Sunset: ${printable(sunset, 80)}`,
    ].filter(Boolean);
    warnOnce(
      `${operation} is deprecated by the service in ${where} (${parts.join('; ')}); it may stop working`,
    );
  }

  function failure(
    operation: string,
    status: number,
    text: string,
    subject?: string,
    advice = 'try again later',
  ): PetinvError {
    let body: ServiceErrorBody | undefined;
    try {
      const parsed = ApiError.safeParse(JSON.parse(text));
      if (parsed.success) body = parsed.data;
    } catch {
      // Not JSON: described below from the status alone.
    }
    // The HTTP status decides the kind even when the body's own `status` disagrees.
    const kind = kindOfStatus(status);
    // The service's words reach a terminal, and --json output, only as one bounded printable line.
    const code = body ? printable(body.code, 64) : `http_${status}`;
    const message = body && printable(body.message);
    const shownText = printable(text);
    const detail = body ? `${status} ${code}: ${message}` : `${status}${shownText ? `: ${shownText}` : ''}`;
    const errorBody = { code, message: message ?? `HTTP ${status}`, status };
    switch (kind) {
      case 'auth':
        return new PetinvError(
          kind,
          `the service refused the API key for ${where} (${detail}); ${options.refusedKeyAdvice ?? `run: petinv login --env ${where}`}`,
          errorBody,
        );
      case 'notFound':
        return subject
          ? new PetinvError(kind, `${subject} not found in ${where} (${detail})`, errorBody)
          : new PetinvError(
              kind,
              `${operation} not found in ${where} (${detail}); check the base URL: petinv env set-url ${where} <url>`,
              errorBody,
            );
      case 'rejected':
        return new PetinvError(kind, `the service rejected ${operation} in ${where} (${detail})`, errorBody);
      default:
        return new PetinvError(
          kind,
          `the service failed ${operation} in ${where} (${detail}); ${advice}`,
          errorBody,
        );
    }
  }

  /**
   * A redirect is never followed (the Authorization header would go along to wherever it points); the
   * error names where it points and how to move the environment there if the service really moved.
   */
  function redirected(
    operation: string,
    url: string,
    path: string,
    response: TransportResponse,
  ): PetinvError {
    const location = response.header('location');
    let suggestion = '<url>';
    let shown = 'no Location';
    if (location !== null) {
      shown = `Location: ${printable(location)}`;
      try {
        const target = new URL(location, url);
        if (target.pathname.endsWith(path) && target.search === '' && /^https?:$/.test(target.protocol))
          suggestion = printable(`${target.origin}${target.pathname.slice(0, -path.length)}`);
      } catch {
        // Not a URL: the user picks the new address.
      }
    }
    return new PetinvError(
      'config',
      `the service in ${where} answered ${operation} with a redirect (${response.status}, ${shown}); petinv does not follow redirects, so the API key goes nowhere else; if the service moved, run: petinv env set-url ${where} ${suggestion}`,
      { code: 'redirect', message: `redirect (${response.status}) not followed`, status: response.status },
    );
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
  }

  /** One request with its retries: the answer, or with `read`, what `read` makes of it. */
  async function call(
    method: string,
    path: string,
    body?: string,
    subject?: string,
  ): Promise<TransportResponse>;
  async function call<T>(
    method: string,
    path: string,
    body: string | undefined,
    subject: string | undefined,
    options: CallOptions<T> & { read: (response: TransportResponse) => Promise<T> },
  ): Promise<T>;
  async function call<T>(
    method: string,
    path: string,
    body?: string,
    subject?: string,
    { ifNoneMatch, read }: CallOptions<T> = {},
  ): Promise<T | TransportResponse> {
    const operation = `${method} ${path}`;
    // Built once: the bulk path sends thousands of PATCHes with the same headers.
    const requestHeaders =
      ifNoneMatch !== undefined
        ? { ...headers, 'If-None-Match': ifNoneMatch }
        : body === undefined
          ? headers
          : headersWithBody;
    const url = `${baseUrl}${path}`;
    let waitedMs = 0;
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
      options.onRetryWait?.({
        operation,
        ms: delay.ms,
        status: response?.status,
        retryAfter: delay.retryAfter,
      });
      await sleep(delay.ms);
      return true;
    };
    /** Returns once it has waited for another attempt; throws the error the user sees when none is left. */
    const retryOrThrow = async (error: unknown, attempt: number): Promise<void> => {
      if (!(error instanceof TransportError)) throw error;
      if (error.reason === 'tls') {
        // The same certificate will be presented again: retrying cannot help.
        throw new PetinvError(
          'network',
          `cannot trust the TLS certificate of ${error.unreachable ?? new URL(url).origin} in ${where}: it presented ${printable(error.detail)}; certificates are always checked, against Node's authorities and those in NODE_EXTRA_CA_CERTS (a PEM file: point it at a private authority's certificate)`,
          { code: 'tls' },
        );
      }
      if (error.reason === 'too large') throw tooLarge(operation);
      if (await waitToRetry(attempt)) return;
      throw unreachable(error, url, attempt === 0 ? '' : ` after ${attempt + 1} attempts`);
    };
    for (let attempt = 0; ; attempt++) {
      let response: TransportResponse;
      try {
        response = await transport({
          method,
          url,
          origin: split?.origin,
          path: split && split.basePath + path,
          headers: requestHeaders,
          body,
          timeoutMs,
          maxBodyBytes,
          stream: read !== undefined,
        });
      } catch (error) {
        await retryOrThrow(error, attempt);
        continue;
      }
      if (RETRYABLE_STATUSES.has(response.status) && (await waitToRetry(attempt, response))) continue;
      noticeDeprecation(operation, response);
      if (response.status === 304 && ifNoneMatch === undefined)
        throw contractError(operation, 'it answered 304 Not Modified to a request that was not conditional');
      if (response.status === 304) {
        // Not modified: what the caller holds still stands.
      } else if (response.status >= 300 && response.status < 400)
        throw redirected(operation, url, path, response);
      else if (response.status < 200 || response.status > 299) {
        const advice =
          lastRefusedWaitMs === undefined
            ? undefined
            : `it asked for ${Math.ceil(lastRefusedWaitMs / 1000)}s more before a retry, past the ${maxRetryWaitMs / 1000}s petinv waits in all (--max-retry-wait, PETINV_MAX_RETRY_WAIT); raise it, or try again later`;
        throw failure(operation, response.status, response.text, subject, advice);
      }
      if (!read) return response;
      try {
        return await read(response);
      } catch (error) {
        await retryOrThrow(error, attempt);
      }
    }
  }

  function tooLarge(operation: string): PetinvError {
    return new PetinvError(
      'server',
      `the answer from ${where} to ${operation} is larger than ${formatBytes(maxBodyBytes)}, the limit petinv reads; raise it with --max-body-size or PETINV_MAX_BODY_SIZE`,
      { code: 'body_too_large' },
    );
  }

  function unreachable(error: TransportError, url: string, attempts: string): PetinvError {
    if (error.reason === 'timeout') {
      return new PetinvError(
        'server',
        `no answer from ${url} within ${timeoutMs} ms in ${where}${attempts}; raise --timeout or try again later`,
        {
          code: 'timeout',
        },
      );
    }
    const advice = error.unreachable
      ? 'is the proxy up, and the proxy variable right?'
      : 'is the service up and the base URL right? see petinv config';
    return new PetinvError(
      'network',
      `cannot reach ${error.unreachable ?? url} in ${where} (${printable(error.detail)})${attempts}; ${advice}`,
      {
        code: 'network',
      },
    );
  }

  /**
   * A failure of a list answer after its first items were handed out: they may be printed already, so it
   * is not retried, and it is a server error (exit 8) whatever broke it, a cut connection included.
   */
  function brokenOff(operation: string, url: string, error: unknown, handedOut: number): PetinvError {
    if (error instanceof InventoryStreamError) return contractError(operation, error.message);
    if (!(error instanceof TransportError)) return error as PetinvError;
    if (error.reason === 'too large') return tooLarge(operation);
    if (error.reason === 'timeout') return unreachable(error, url, '');
    return new PetinvError(
      'server',
      `the answer from ${where} to ${operation} broke off after ${handedOut} ${handedOut === 1 ? 'item' : 'items'} (${printable(error.detail)})`,
      { code: 'broken_response' },
    );
  }

  function contractError(operation: string, problem: string): PetinvError {
    return new PetinvError(
      'server',
      `the answer from ${where} to ${operation} does not match the contract: ${printable(problem, 300)}`,
      {
        code: 'invalid_response',
      },
    );
  }

  function decode<T>(
    operation: string,
    text: string,
    schema: {
      safeParse(
        input: unknown,
      ): { success: true; data: T } | { success: false; error: Parameters<typeof describeIssues>[0] };
    },
  ): T {
    let raw: unknown;
    try {
      raw = parseInventoryJson(text);
    } catch (error) {
      throw contractError(operation, `not JSON (${(error as Error).message})`);
    }
    const parsed = schema.safeParse(raw);
    if (!parsed.success) throw contractError(operation, describeIssues(parsed.error));
    return parsed.data;
  }

  /** The list's batches from a body: the answer's as it arrives, or the kept one after a 304. */
  function startList(chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>) {
    const batches = parseInventoryStream(chunks);
    return batches
      .next()
      .then((first) => ({ batches, first }))
      .catch((error: unknown) => {
        if (error instanceof InventoryStreamError) throw contractError('GET /inventory', error.message);
        throw error;
      });
  }

  /**
   * Opens GET /inventory and takes its first batch: conditional when a list is kept (`kept`), and then a
   * 304 reads the kept body through the same parser and checks. A fresh body is copied into the cache as
   * it passes (`writer`), to be kept only once it was read whole and valid.
   */
  async function openList(kept: CachedList | undefined) {
    return call('GET', '/inventory', undefined, undefined, {
      ifNoneMatch: kept?.etag,
      read: async (response) => {
        if (response.status === 304)
          return { ...(await startList((kept as CachedList).chunks())), fromCache: true };
        const etag = response.header('etag');
        const writer = isCacheableEtag(etag) ? options.listCache?.writer(etag) : undefined;
        // A transport that does not stream (a library caller's own) hands over the text.
        const body = response.body ?? [Buffer.from(response.text)];
        try {
          return { ...(await startList(writer ? copiedInto(body, writer) : body)), writer, fromCache: false };
        } catch (error) {
          writer?.abort();
          throw error;
        }
      },
    });
  }

  async function* streamInventory(): AsyncGenerator<InventoryItem[], void, undefined> {
    const operation = 'GET /inventory';
    const kept = options.listCache?.open();
    let list: Awaited<ReturnType<typeof openList>> & { writer?: CacheWriter };
    try {
      // The first batch is taken inside the attempt, so a failure before anything was handed out is
      // retried (or refused) like any other; what follows cannot be taken back.
      list = await openList(kept).catch(async (error: unknown) => {
        if (!kept || !(error instanceof PetinvError && error.body.code === 'invalid_response')) throw error;
        // The kept body no longer reads as a list: forget it, and ask for the whole list.
        options.listCache?.drop();
        kept.close();
        return openList(undefined);
      });
    } catch (error) {
      kept?.close();
      throw error;
    }
    const { batches, first, writer } = list;
    let handedOut = 0;
    let whole = false;
    try {
      if (!first.done) {
        handedOut += first.value.length;
        yield first.value;
        for await (const batch of batches) {
          handedOut += batch.length;
          yield batch;
        }
      }
      whole = true;
    } catch (error) {
      if (list.fromCache) options.listCache?.drop();
      throw brokenOff(operation, `${baseUrl}/inventory`, error, handedOut);
    } finally {
      // A consumer that stops early (--limit, a closed pipe) cancels the rest of the body.
      await batches.return();
      if (whole) writer?.commit();
      else writer?.abort();
      kept?.close();
    }
  }

  return {
    streamInventory,
    async listInventory() {
      const items: InventoryItem[] = [];
      for await (const batch of streamInventory()) for (const item of batch) items.push(item);
      return items;
    },
    pollInventory: (etag) =>
      call('GET', '/inventory', undefined, undefined, {
        ifNoneMatch: etag,
        read: async (response): Promise<InventoryPoll> => {
          if (response.status === 304) return { changed: false };
          const items: InventoryItem[] = [];
          try {
            for await (const batch of parseInventoryStream(response.body ?? [Buffer.from(response.text)]))
              for (const item of batch) items.push(item);
          } catch (error) {
            if (error instanceof InventoryStreamError) throw contractError('GET /inventory', error.message);
            throw error;
          }
          return { changed: true, items, etag: response.header('etag') ?? undefined };
        },
      }),
    async updateInventory(petId, quantity) {
      const path = `/inventory/${petId}`;
      const text = (await call('PATCH', path, serializeUpdate(quantity), `pet ${petId}`)).text;
      const item = readCanonicalItem(text) ?? decode(`PATCH ${path}`, text, InventoryItemResponse);
      if (item.petId !== petId) throw contractError(`PATCH ${path}`, `it answered for pet ${item.petId}`);
      return item;
    },
  };
}
