import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { STORE_HEADER } from '../contract/store-id';
import type { HttpError } from './errors';

export const JSON_TYPE = 'application/json; charset=utf-8';

/** Below this size a Buffer body goes out as a latin1 string, which node:http joins to the headers in one write. */
const SINGLE_WRITE_LIMIT = 16 * 1024;

export function endWith(res: ServerResponse, body: string | Buffer) {
  if (typeof body !== 'string' && body.length <= SINGLE_WRITE_LIMIT)
    res.end(body.toString('latin1'), 'latin1');
  else res.end(body);
}

/**
 * An answer's headers with the store serve serves (Petinv-Store), written with the others: a header set
 * apart (setHeader) sends node:http's writeHead down its slow path, a tenth of a GET's time.
 */
export const withStore = <T extends Record<string, string | number>>(
  headers: T,
  storeId: string | undefined,
) => (storeId === undefined ? headers : { ...headers, [STORE_HEADER]: storeId });

export function sendJson(
  res: ServerResponse,
  status: number,
  body: string | Buffer,
  headers: Record<string, string> = {},
  storeId?: string,
) {
  res.writeHead(
    status,
    withStore({ 'Content-Type': JSON_TYPE, 'Content-Length': Buffer.byteLength(body), ...headers }, storeId),
  );
  endWith(res, body);
}

export const errorBody = (error: HttpError) =>
  JSON.stringify({ code: error.code, message: error.message, status: error.status });

export function sendError(res: ServerResponse, error: HttpError, storeId?: string) {
  // The connection ends with this answer: node:http, and the ordering of pipelined requests, go by this.
  if (error.headers.Connection === 'close') res.shouldKeepAlive = false;
  sendJson(res, error.status, errorBody(error), error.headers, storeId);
}

/** Closes `socket` once the answer `res` is out: said in the answer itself (`Connection: close`) before it starts. */
export function closeAfter(res: ServerResponse, socket: Socket) {
  if (!res.headersSent) res.shouldKeepAlive = false;
  else if (res.writableFinished) socket.destroySoon();
  else res.once('finish', () => socket.destroySoon());
}
