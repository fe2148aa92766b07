import { hash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { serializeItem } from '../api/json';
import { describeIssues, InventoryUpdate, parsePetId } from '../api/schemas';
import { StorageError } from '../files/file-system';
import { BODY_LIMIT_BYTES } from './limits';
import { openApiDocument } from './openapi';
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
  random?: () => number;
  now?: () => number;
}

export type RequestLogEntry =
  | { method: string; path: string; status: number; ms: number }
  | { method: string; path: string; fault: string };

type Handler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** Below this size a Buffer body goes out as a latin1 string, which node:http joins to the headers in one write. */
const SINGLE_WRITE_LIMIT = 16 * 1024;
const JSON_TYPE = 'application/json; charset=utf-8';

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

function sendError(res: ServerResponse, error: HttpError) {
  sendJson(
    res,
    error.status,
    JSON.stringify({ code: error.code, message: error.message, status: error.status }),
    error.headers,
  );
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

function readBody(req: IncomingMessage): Promise<string> {
  const tooLarge = () =>
    new HttpError(413, 'payload_too_large', `request body exceeds ${BODY_LIMIT_BYTES} bytes`, {
      Connection: 'close',
    });
  if (Number(req.headers['content-length']) > BODY_LIMIT_BYTES) return Promise.reject(tooLarge());
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
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
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
export function createInventoryApp(options: AppOptions): Handler {
  const { store } = options;
  const random = options.random ?? Math.random;
  const now = options.now ?? Date.now;
  const authenticate = createAuthenticator(options.apiKeys);
  const openApiBody = JSON.stringify(openApiDocument);
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
    const petId = parsePetId(petIdText);
    if (petId === undefined) {
      throw new HttpError(
        400,
        'invalid_pet_id',
        `petId "${petIdText}" in the path is not an integer within int64`,
      );
    }
    const contentType = req.headers['content-type'];
    if (contentType !== undefined && !isJsonContentType(contentType)) {
      throw new HttpError(
        415,
        'unsupported_media_type',
        `Content-Type must be application/json, not ${contentType}`,
      );
    }
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
      return sendJson(res, 200, openApiBody);
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
    if (path === '/healthz') return;
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
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    try {
      if (options.latency) {
        const { min, max } = options.latency;
        await new Promise((resolve) => setTimeout(resolve, min + random() * (max - min)));
      }
      injectFaults(path);
      await route(req, res, path);
    } catch (error) {
      if (error instanceof HttpError) {
        sendError(res, error);
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
      options.log?.({ method: req.method ?? '', path, status: res.statusCode, ms });
    }
  };
}
