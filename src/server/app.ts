import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { DEFAULT_BASE_URL } from '../contract/defaults';
import { createAuthenticator } from './auth';
import { CLOSE, HttpError } from './errors';
import { createHandlers } from './handlers';
import { buildOpenApiDocument } from './openapi';
import { ClientAborted, requestPath } from './request';
import { sendError } from './respond';
import { createRouter, type Route } from './routes';
import type { InventoryStore } from './store';

export interface FaultOptions {
  /** Delay before every response, in ms: drawn uniformly from [min, max]. */
  latency?: { min: number; max: number };
  /** Fraction of requests (0 to 1) answered with 503. */
  failRate?: number;
  /** Requests per second past which 429 is answered. */
  rateLimit?: number;
}

export interface AppOptions extends FaultOptions {
  store: InventoryStore;
  apiKeys: readonly string[];
  /** Receives one entry per request, and one per unexpected fault; omit for silence. */
  log?: (entry: RequestLogEntry) => void;
  /** False: no entry per request is made (serve --quiet); faults are logged still. */
  logRequests?: boolean;
  /** The base URL the served OpenAPI document names; read on the first request for it. */
  baseUrl?: () => string;
  /** Answered in Petinv-Store on every response (store-id.ts). */
  storeId?: string;
}

export type RequestLogEntry =
  | { method: string; path: string; status: number; ms: number }
  | { method: string; path: string; fault: string }
  /** The client closed the connection before its request was complete. */
  | { method: string; path: string; aborted: true; ms: number }
  /** A request node:http could not parse, or did not receive in time, answered below the app. */
  | { event: 'client_error'; code: string; status: number }
  /** New connections closed at once because --max-connections were open; one entry per second at most. */
  | { event: 'connections_refused'; count: number; limit: number }
  /** New connections of one client closed at once because it had --max-connections-per-client open. */
  | { event: 'client_connections_refused'; client: string; count: number; limit: number }
  /** A connection closed with more pipelined requests waiting their turn than may; those waiting were dropped. */
  | { event: 'pipeline_overflow'; limit: number };

export type AppHandler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/** --rate-limit and --fail-rate: throws the 429 or 503 a request meets, on the routes that are not spared. */
function createFaultInjector(options: AppOptions): (route: Route | undefined) => void {
  let rateWindow = { second: -1, count: 0 };
  return (route) => {
    if (route?.faults === false) return;
    if (options.rateLimit !== undefined) {
      const second = Math.floor(Date.now() / 1000);
      if (second !== rateWindow.second) rateWindow = { second, count: 0 };
      // The window ends within the second: Retry-After counts in whole seconds.
      if (++rateWindow.count > options.rateLimit)
        throw new HttpError('rate_limited', `more than ${options.rateLimit} requests per second`, {
          'Retry-After': '1',
        });
    }
    if (options.failRate !== undefined && Math.random() < options.failRate)
      throw new HttpError('unavailable', 'injected failure (--fail-rate)', { 'Retry-After': '1' });
  };
}

function checkRequestLine(req: IncomingMessage) {
  // node:http parses a request line of HTTP/0.9 (no version) or HTTP/2.0 as if it were HTTP/1.1.
  if (req.httpVersionMajor !== 1)
    throw new HttpError(
      'malformed_request',
      `serve speaks HTTP/1.0 and HTTP/1.1, not ${req.httpVersion}`,
      CLOSE,
    );
  // RFC 9112 section 3.2 (node:http's own check answers without a body, so serve makes it).
  if (req.headers.host === undefined && req.httpVersion === '1.1')
    throw new HttpError('malformed_request', 'an HTTP/1.1 request must carry a Host header', CLOSE);
}

/** The one error path: an HttpError is answered as it says, anything else is a logged 500. */
function answerFailure(
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  error: unknown,
  { log, storeId }: AppOptions,
) {
  if (error instanceof HttpError) {
    // Headers already sent: the HTTP edge has answered this request (a timeout, a broken chunk).
    if (!res.headersSent) sendError(res, error, storeId);
    return;
  }
  log?.({ method: req.method ?? '', path, fault: (error as Error)?.message ?? String(error) });
  const fault = new HttpError('internal_error', 'the server met an unexpected fault; see its log');
  if (!res.headersSent) sendError(res, fault, storeId);
  else res.destroy();
}

/** Builds the request handler of `petinv serve`: routing, auth, validation, faults, logging. */
export function createInventoryApp(options: AppOptions): AppHandler {
  let openApiBody: string | undefined;
  const describeServer = () =>
    (openApiBody ??= JSON.stringify(
      buildOpenApiDocument({
        baseUrl: options.baseUrl?.() ?? DEFAULT_BASE_URL,
        rateLimit: options.rateLimit,
        failRate: options.failRate,
      }),
    ));
  const handlers = createHandlers({
    store: options.store,
    storeId: options.storeId,
    describeServer,
    logFault: (req, fault) => options.log?.({ method: req.method ?? '', path: req.url ?? '', fault }),
  });
  const router = createRouter(handlers, createAuthenticator(options.apiKeys));
  const injectFaults = createFaultInjector(options);
  const dispatch = (req: IncomingMessage, res: ServerResponse, path: string) => {
    const matched = router.match(path);
    injectFaults(matched?.route);
    return router.dispatch(req, res, path, matched);
  };
  const logRequests = options.log !== undefined && options.logRequests !== false;

  /** Answers what went wrong, and logs the request, once `handled` has settled. */
  async function settle(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    handled: unknown,
    started: number,
  ) {
    let aborted = false;
    await Promise.resolve(handled).catch((error: unknown) => {
      if (error instanceof ClientAborted) aborted = true;
      else answerFailure(req, res, path, error, options);
    });
    if (!logRequests) return;
    const ms = Math.round((performance.now() - started) * 10) / 10;
    const method = req.method ?? '';
    options.log?.(
      aborted ? { method, path, aborted: true, ms } : { method, path, status: res.statusCode, ms },
    );
  }

  return (req, res) => {
    const started = logRequests ? performance.now() : 0;
    const path = requestPath(req.url ?? '/');
    let handled: void | Promise<void>;
    try {
      checkRequestLine(req);
      const { latency } = options;
      handled = latency
        ? delay(latency.min + Math.random() * (latency.max - latency.min)).then(() =>
            dispatch(req, res, path),
          )
        : dispatch(req, res, path);
    } catch (error) {
      // Answered a microtask later, once node:http has parsed what followed the headers in the same read:
      // a malformed body there is answered by the HTTP edge instead.
      handled = Promise.reject(error);
    }
    // The hot path, a GET answered at once with no request log, makes no promise.
    return handled === undefined && !logRequests ? undefined : settle(req, res, path, handled, started);
  };
}
