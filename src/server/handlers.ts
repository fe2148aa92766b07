import type { IncomingMessage, ServerResponse } from 'node:http';
import { serializeItem } from '../contract/json';
import { PET_ID_RULE, parsePetId, parseQuantity } from '../contract/rules';
import { describeIssues, type InventoryUpdate, parseInventoryUpdate } from '../contract/schemas';
import { IF_QUANTITY_HEADER, QUANTITY_HEADER } from '../contract/store-id';
import { StorageError } from '../files/file-system';
import { HttpError } from './errors';
import { checkBodyEncoding, decodePathSegment, isJsonContentType, quoted, readBody } from './request';
import { placeFixed } from './request-order';
import { endWith, JSON_TYPE, sendJson, withStore } from './respond';
import type { OperationId, RouteHandler } from './routes';
import { type InventoryStore, QuantityChanged } from './store';

/** The spec marks GET /pets/{petId} deprecated without a date; this server reports 2026-01-01 (RFC 9745 form). */
export const PETS_DEPRECATION = '@1767225600';

export interface HandlerContext {
  store: InventoryStore;
  /** Said in every answer's Petinv-Store header, when serve has one (its data file's; none in memory). */
  storeId?: string;
  /** The served OpenAPI document, as JSON text. */
  describeServer: () => string;
  /** Told of a write that failed, with its path and cause, which the client is not told. */
  logFault: (req: IncomingMessage, fault: string) => void;
}

/** A PATCH whose write failed: nothing of it was applied; 507 when the disk is full, else 503. */
function storageFailure(error: StorageError): HttpError {
  return error.outOfSpace
    ? new HttpError(
        'insufficient_storage',
        'the server has no space left to record the update; nothing was changed',
      )
    : new HttpError('storage_unavailable', 'the server could not record the update; nothing was changed', {
        'Retry-After': '1',
      });
}

function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

/** GET /inventory, serve's hot path: its answer's headers are made once for each list body. */
function listInventory({ store, storeId }: HandlerContext): RouteHandler {
  let sent: { body: Buffer; etag: string; headers: Record<string, string | number> } | undefined;
  return (req, res) => {
    const etag = store.etag;
    if (etagMatches(req.headers['if-none-match'], etag)) {
      res.writeHead(304, withStore({ ETag: etag, 'Cache-Control': 'no-cache' }, storeId));
      res.end();
      return;
    }
    const body = store.listBody();
    if (sent?.body !== body || sent.etag !== etag) {
      const headers = {
        'Content-Type': JSON_TYPE,
        'Content-Length': body.length,
        ETag: etag,
        'Cache-Control': 'no-cache',
      };
      sent = { body, etag, headers: withStore(headers, storeId) };
    }
    res.writeHead(200, sent.headers);
    endWith(res, body); // HEAD drops the body by itself
  };
}

/** The quantity a PATCH asks the pet to hold before it is applied (Petinv-If-Quantity), if it asks. */
function readIfQuantity(req: IncomingMessage): number | undefined {
  const text = req.headers[IF_QUANTITY_HEADER.toLowerCase()];
  if (text === undefined) return undefined;
  const quantity = typeof text === 'string' ? parseQuantity(text.trim()) : undefined;
  if (quantity === undefined)
    throw new HttpError(
      'malformed_request',
      `${IF_QUANTITY_HEADER} must be one whole number, not ${quoted(String(text))}`,
    );
  return quantity;
}

/** The update a PATCH body carries; its media type and encoding are checked before it is read. */
async function readUpdate(req: IncomingMessage): Promise<InventoryUpdate> {
  const contentType = req.headers['content-type'];
  if (contentType !== undefined && !isJsonContentType(contentType))
    throw new HttpError(
      'unsupported_media_type',
      `Content-Type must be application/json, not ${quoted(contentType)}`,
    );
  checkBodyEncoding(req, contentType);
  const text = await readBody(req);
  if (text.trim() === '')
    throw new HttpError('missing_body', 'a JSON body {"quantity": <integer>} is required');
  if (contentType === undefined)
    throw new HttpError('unsupported_media_type', 'Content-Type must be application/json');
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new HttpError('malformed_json', `the body is not valid JSON: ${(error as Error).message}`);
  }
  const update = parseInventoryUpdate(raw);
  if (!update.success) throw new HttpError('invalid_body', describeIssues(update.error));
  return update.data;
}

async function updateInventory(
  { store, storeId, logFault }: HandlerContext,
  req: IncomingMessage,
  res: ServerResponse,
  petIdText: string,
) {
  const decoded = decodePathSegment(petIdText);
  const petId = decoded === undefined ? undefined : parsePetId(decoded);
  if (petId === undefined)
    throw new HttpError('invalid_pet_id', `petId ${quoted(petIdText)} in the path is not ${PET_ID_RULE}`);
  const ifQuantity = readIfQuantity(req);
  const update = await readUpdate(req);
  const written = store.setQuantity(petId, update.quantity, ifQuantity);
  // Queued: a PATCH pipelined behind this one may start now, and be written in the same commit.
  placeFixed(req);
  const item = await written.catch((error: unknown) => {
    if (error instanceof QuantityChanged)
      throw new HttpError(
        'quantity_changed',
        `pet ${petId} holds ${error.current}, not ${ifQuantity} as ${IF_QUANTITY_HEADER} said; nothing was changed`,
        { [QUANTITY_HEADER]: String(error.current) },
      );
    if (!(error instanceof StorageError)) throw error;
    // The operator needs the path and the cause; the client only what happened, without paths.
    logFault(req, error.message);
    throw storageFailure(error);
  });
  if (!item) throw new HttpError('pet_not_found', `pet ${petId} is not in the inventory`);
  sendJson(res, 200, serializeItem(item), {}, storeId);
}

export function createHandlers(context: HandlerContext): Record<OperationId, RouteHandler> {
  return {
    health: (_req, res) => sendJson(res, 200, '{"status":"ok"}', {}, context.storeId),
    describeServer: (_req, res) => sendJson(res, 200, context.describeServer(), {}, context.storeId),
    listInventory: listInventory(context),
    updateInventory: (req, res, petId) => updateInventory(context, req, res, petId),
    getPet: () => {
      throw new HttpError(
        'not_implemented',
        'GET /pets/{petId} is deprecated and its shape is not specified; this server does not implement it',
        { Deprecation: PETS_DEPRECATION },
      );
    },
    listOrders: () => {
      throw new HttpError(
        'not_implemented',
        'GET /store/orders is part of the wider interface, but its shape is not specified; this server does not implement it',
      );
    },
  };
}
