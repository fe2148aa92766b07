import { hash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { serializeItem } from '../api/json';
import { describeIssues, InventoryUpdate, parsePetId } from '../api/schemas';
import { StorageError } from '../files/file-system';
import { DEFAULT_BASE_URL } from './defaults';
import { BODY_LIMIT_BYTES } from './limits';
import { buildOpenApiDocument } from './openapi';
import type { InventoryStore } from './store';

/** The spec marks GET /pets/{petId} deprecated without a date; this server reports 2026-01-01 (RFC 9745 form). */
export const PETS_DEPRECATION = '@1767225600';

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
  /** The base URL the served OpenAPI document names; read on the first request for it. */
  baseUrl?: () => string;
  random?: () => number;
  now?: () => number;
}

export type RequestLogEntry =
  | { method: string; path: string; status: number; ms: number }
  | { method: string; path: string; fault: string }
  /** The client closed the connection before its request was complete. */
  | { method: string; path: string; aborted: true; ms: number }
  /** A request node:http could not parse, or did not receive in time, answered below the app. */
  | { event: 'client_error'; code: string; status: number }
  /** New connections closed at once because --max-connections were open; one entry per second at most. */
  | { event: 'connections_refused'; count: number; limit: number };

export type AppHandler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** The client went away before its request body was complete: nobody is left to answer. */
class ClientAborted extends Error {}

/** Below this size a Buffer body goes out as a latin1 string, which node:http joins to the headers in one write. */
const SINGLE_WRITE_LIMIT = 16 * 1024;
export const JSON_TYPE = 'application/json; charset=utf-8';

function endWith(res: ServerResponse, body: string | Buffer) {
  if (typeof body !== 'string' && body.length <= SINGLE_WRITE_LIMIT)
    res.end(body.toString('latin1'), 'latin1');
  else res.end(body);
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: string | Buffer,
  headers: Record<string, string> = {},
) {
  res.writeHead(status, { 'Content-Type': JSON_TYPE, 'Content-Length': Buffer.byteLength(body), ...headers });
  endWith(res, body);
}

export const errorBody = (error: HttpError) =>
  JSON.stringify({ code: error.code, message: error.message, status: error.status });

export function sendError(res: ServerResponse, error: HttpError) {
  sendJson(res, error.status, errorBody(error), error.headers);
}

const digest = (text: string) => hash('sha256', text, 'buffer');

function createAuthenticator(apiKeys: readonly string[]) {
  const digests = apiKeys.map(digest);
  return (req: IncomingMessage) => {
    const header = req.headers.authorization;
    const challenge = { 'WWW-Authenticate': 'Bearer realm="petinv"' };
    if (!header)
      throw new HttpError(
        401,
        'unauthorized',
        'missing Authorization header; send "Authorization: Bearer <API key>"',
        challenge,
      );
    const match = /^Bearer[ \t]+(\S*)[ \t]*$/i.exec(header);
    if (!match)
      throw new HttpError(
        401,
        'unauthorized',
        'the Authorization header must use the Bearer scheme',
        challenge,
      );
    const key = match[1] ?? '';
    if (key === '') throw new HttpError(401, 'unauthorized', 'the bearer API key is empty', challenge);
    // Digests have equal length, so every comparison takes the same time whatever the key.
    const presented = digest(key);
    let valid = false;
    for (const known of digests) valid = timingSafeEqual(presented, known) || valid;
    if (!valid)
      throw new HttpError(401, 'unauthorized', 'the API key is not valid', {
        'WWW-Authenticate': 'Bearer realm="petinv", error="invalid_token"',
      });
  };
}

function isJsonContentType(value: string | undefined): boolean {
  if (!value) return false;
  const type = value.split(';')[0]?.trim().toLowerCase() ?? '';
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

/** The charset parameter of a Content-Type, lower case; undefined when there is none. */
function charsetOf(contentType: string): string | undefined {
  return /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(contentType)?.[1]?.toLowerCase();
}

/** A value from the request, quoted and cut short, for an error message. */
export const quoted = (text: string) => JSON.stringify(text.length > 64 ? `${text.slice(0, 64)}…` : text);

/** Refuses a body serve would otherwise misread: compressed, or in another charset than UTF-8 (RFC 7694). */
function checkBodyEncoding(req: IncomingMessage, contentType: string | undefined) {
  const encoding = req.headers['content-encoding']?.trim().toLowerCase();
  if (encoding && encoding !== 'identity')
    throw new HttpError(
      415,
      'unsupported_media_type',
      `Content-Encoding ${quoted(encoding)} is not supported; send the body uncompressed`,
      { 'Accept-Encoding': 'identity' },
    );
  const charset = contentType === undefined ? undefined : charsetOf(contentType);
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8')
    throw new HttpError(
      415,
      'unsupported_media_type',
      `charset ${quoted(charset)} is not supported; JSON bodies must be UTF-8`,
    );
}

/** A petId as it appears in the path, percent-escapes decoded; undefined for a broken escape. */
function decodePathSegment(text: string): string | undefined {
  if (!text.includes('%')) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/** The path of a request target without its query; an absolute-form target (`http://host:port/v1/x`) too. */
export function requestPath(target: string): string {
  // Origin form (`/v1/...`) is the hot path; only another form pays for a regular expression.
  if (target.charCodeAt(0) === 47) {
    const query = target.indexOf('?');
    return query === -1 ? target : target.slice(0, query);
  }
  const absolute = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*([^?#]*)/i.exec(target);
  if (!absolute) return target; // `*`, or no URL at all: no route will match it
  return absolute[1] || '/';
}

function readBody(req: IncomingMessage): Promise<string> {
  const tooLarge = () =>
    new HttpError(413, 'payload_too_large', `request body exceeds ${BODY_LIMIT_BYTES} bytes`, {
      Connection: 'close',
    });
  if (Number(req.headers['content-length']) > BODY_LIMIT_BYTES) return Promise.reject(tooLarge());
  // Gone already (during --latency, say): its 'error' and 'close' have been emitted, and 'end' never comes.
  if (req.destroyed && !req.complete) return Promise.reject(new ClientAborted());
  // Plain events rather than `for await`: this is on the PATCH hot path, and the iterator costs more.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > BODY_LIMIT_BYTES) {
        req.removeAllListeners('data');
        req.pause();
        reject(tooLarge());
      } else chunks.push(chunk);
    });
    // An end without the whole message: node:http dumped the rest of a request already answered.
    req.on('end', () =>
      req.complete ? resolve(Buffer.concat(chunks).toString('utf8')) : reject(new ClientAborted()),
    );
    // An incomplete request that errors or closes was cut off by its client (or a request timeout).
    req.on('error', (error) => reject(req.complete ? error : new ClientAborted()));
    req.on('close', () => reject(new ClientAborted()));
  });
}

/** A PATCH whose write failed: nothing of it was applied; 507 when the disk is full, else 503. */
function storageFailure(error: StorageError): HttpError {
  return error.outOfSpace
    ? new HttpError(
        507,
        'insufficient_storage',
        'the server has no space left to record the update; nothing was changed',
      )
    : new HttpError(
        503,
        'storage_unavailable',
        'the server could not record the update; nothing was changed',
        {
          'Retry-After': '1',
        },
      );
}

function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

/** Builds the request handler of `petinv serve`: routing, auth, validation, faults, logging. */
export function createInventoryApp(options: AppOptions): AppHandler {
  const { store } = options;
  const random = options.random ?? Math.random;
  const now = options.now ?? Date.now;
  const authenticate = createAuthenticator(options.apiKeys);
  let openApiBody: string | undefined;
  const describeServer = () =>
    (openApiBody ??= JSON.stringify(
      buildOpenApiDocument({
        baseUrl: options.baseUrl?.() ?? DEFAULT_BASE_URL,
        rateLimit: options.rateLimit,
        failRate: options.failRate,
      }),
    ));
  let rateWindow = { second: -1, count: 0 };

  const methodNotAllowed = (allow: string) =>
    new HttpError(405, 'method_not_allowed', `this route allows ${allow}`, { Allow: allow });

  function listInventory(req: IncomingMessage, res: ServerResponse) {
    const etag = store.etag;
    if (etagMatches(req.headers['if-none-match'], etag)) {
      res.writeHead(304, { ETag: etag, 'Cache-Control': 'no-cache' });
      res.end();
      return;
    }
    // The hot path of the server: headers written once, no object spread. HEAD drops the body by itself.
    const body = store.listBody();
    res.writeHead(200, {
      'Content-Type': JSON_TYPE,
      'Content-Length': body.length,
      ETag: etag,
      'Cache-Control': 'no-cache',
    });
    endWith(res, body);
  }

  async function updateInventory(req: IncomingMessage, res: ServerResponse, petIdText: string) {
    const decoded = decodePathSegment(petIdText);
    const petId = decoded === undefined ? undefined : parsePetId(decoded);
    if (petId === undefined) {
      throw new HttpError(
        400,
        'invalid_pet_id',
        `petId ${quoted(petIdText)} in the path is not an integer within int64`,
      );
    }
    const contentType = req.headers['content-type'];
    if (contentType !== undefined && !isJsonContentType(contentType)) {
      throw new HttpError(
        415,
        'unsupported_media_type',
        `Content-Type must be application/json, not ${quoted(contentType)}`,
      );
    }
    checkBodyEncoding(req, contentType);
    const text = await readBody(req);
    if (text.trim() === '')
      throw new HttpError(400, 'missing_body', 'a JSON body {"quantity": <integer>} is required');
    if (contentType === undefined)
      throw new HttpError(415, 'unsupported_media_type', 'Content-Type must be application/json');
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (error) {
      throw new HttpError(400, 'malformed_json', `the body is not valid JSON: ${(error as Error).message}`);
    }
    const update = InventoryUpdate.safeParse(raw);
    if (!update.success) throw new HttpError(400, 'invalid_body', describeIssues(update.error));
    const item = await store.setQuantity(petId, update.data.quantity).catch((error: unknown) => {
      if (!(error instanceof StorageError)) throw error;
      // The operator needs the path and the cause; the client only what happened, without paths.
      options.log?.({ method: req.method ?? '', path: req.url ?? '', fault: error.message });
      throw storageFailure(error);
    });
    if (!item) throw new HttpError(404, 'pet_not_found', `pet ${petId} is not in the inventory`);
    sendJson(res, 200, serializeItem(item));
  }

  async function route(req: IncomingMessage, res: ServerResponse, path: string) {
    const method = req.method ?? 'GET';
    const readOnly = method === 'GET' || method === 'HEAD';
    if (path === '/healthz') {
      if (!readOnly) throw methodNotAllowed('GET, HEAD');
      return sendJson(res, 200, '{"status":"ok"}');
    }
    if (path === '/v1/openapi.json') {
      if (!readOnly) throw methodNotAllowed('GET, HEAD');
      return sendJson(res, 200, describeServer());
    }
    if (path === '/v1/inventory') {
      authenticate(req);
      if (!readOnly) throw methodNotAllowed('GET, HEAD');
      return listInventory(req, res);
    }
    const petRoute = /^\/v1\/inventory\/([^/]+)$/.exec(path);
    if (petRoute) {
      authenticate(req);
      if (method !== 'PATCH') throw methodNotAllowed('PATCH');
      return updateInventory(req, res, petRoute[1] ?? '');
    }
    if (/^\/v1\/pets\/[^/]+$/.test(path)) {
      authenticate(req);
      if (!readOnly) throw methodNotAllowed('GET, HEAD');
      throw new HttpError(
        501,
        'not_implemented',
        'GET /pets/{petId} is deprecated and its shape is not specified; this server does not implement it',
        {
          Deprecation: PETS_DEPRECATION,
        },
      );
    }
    if (path === '/v1/store/orders') {
      authenticate(req);
      if (!readOnly) throw methodNotAllowed('GET, HEAD');
      throw new HttpError(
        501,
        'not_implemented',
        'GET /store/orders is part of the wider interface, but its shape is not specified; this server does not implement it',
      );
    }
    throw new HttpError(404, 'not_found', `no route ${method} ${path}`);
  }

  function injectFaults(path: string) {
    // Health checks and the tools that read the description must not trip over the faults they describe.
    if (path === '/healthz' || path === '/v1/openapi.json') return;
    if (options.rateLimit !== undefined) {
      const current = now();
      const second = Math.floor(current / 1000);
      if (second !== rateWindow.second) rateWindow = { second, count: 0 };
      if (++rateWindow.count > options.rateLimit) {
        const wait = Math.max(1, Math.ceil((1000 - (current % 1000)) / 1000));
        throw new HttpError(429, 'rate_limited', `more than ${options.rateLimit} requests per second`, {
          'Retry-After': String(wait),
        });
      }
    }
    if (options.failRate !== undefined && random() < options.failRate) {
      throw new HttpError(503, 'unavailable', 'injected failure (--fail-rate)', { 'Retry-After': '1' });
    }
  }

  return async (req, res) => {
    const started = performance.now();
    const path = requestPath(req.url ?? '/');
    let aborted = false;
    try {
      // RFC 9112 section 3.2 (node:http's own check answers without a body, so serve makes it).
      if (req.headers.host === undefined && req.httpVersion === '1.1')
        throw new HttpError(400, 'malformed_request', 'an HTTP/1.1 request must carry a Host header');
      if (options.latency) {
        const { min, max } = options.latency;
        await new Promise((resolve) => setTimeout(resolve, min + random() * (max - min)));
      }
      injectFaults(path);
      await route(req, res, path);
    } catch (error) {
      if (error instanceof ClientAborted) {
        aborted = true;
      } else if (error instanceof HttpError) {
        // Headers already sent: the HTTP edge has answered this request (a timeout, a broken chunk).
        if (!res.headersSent) sendError(res, error);
      } else {
        options.log?.({ method: req.method ?? '', path, fault: (error as Error)?.message ?? String(error) });
        if (!res.headersSent)
          sendError(
            res,
            new HttpError(500, 'internal_error', 'the server met an unexpected fault; see its log'),
          );
        else res.destroy();
      }
    } finally {
      const ms = Math.round((performance.now() - started) * 10) / 10;
      const method = req.method ?? '';
      options.log?.(
        aborted ? { method, path, aborted: true, ms } : { method, path, status: res.statusCode, ms },
      );
    }
  };
}
