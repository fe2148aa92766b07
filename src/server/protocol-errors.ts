import {
  type IncomingMessage,
  maxHeaderSize,
  type Server,
  type ServerResponse,
  STATUS_CODES,
} from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { AppOptions } from './app';
import { CLOSE, HttpError } from './errors';
import { quoted, requestPath, tooLarge } from './request';
import { closeAfter, errorBody, JSON_TYPE, sendError } from './respond';
import { SERVER_METHODS } from './routes';

/**
 * What node:http answers by itself (a request it cannot parse, one that is too slow, an `Expect` it does
 * not know, CONNECT) or drops without a word, answered here with the same Error bodies as every route.
 */

/** How long a connection answered with an error may keep sending before it is cut. */
const LINGER_MS = 2000;

/** A complete HTTP/1.1 response in one string, for a socket no ServerResponse belongs to. */
function rawErrorResponse(error: HttpError): string {
  const body = errorBody(error);
  const headers: Record<string, string | number> = {
    'Content-Type': JSON_TYPE,
    'Content-Length': Buffer.byteLength(body),
    Date: new Date().toUTCString(),
    Connection: 'close',
    ...error.headers,
  };
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  return `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\n${lines.join('')}\r\n${body}`;
}

/** Ends a socket after a last answer; it may keep sending (and is read and dropped) for a while. */
function endLingering(socket: Duplex, answer: string) {
  // Closing at once with unread bytes would send a reset, and the client could lose the answer.
  socket.end(answer);
  const timer = setTimeout(() => socket.destroy(), LINGER_MS).unref();
  socket.once('close', () => clearTimeout(timer));
}

export type Timeouts = { headersTimeout: number; requestTimeout: number };

/** The Error answer for what node:http could not take as a request; undefined when nobody is left to read one. */
function describeClientError(
  error: NodeJS.ErrnoException & { reason?: string },
  { headersTimeout, requestTimeout }: Timeouts,
): HttpError | undefined {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new HttpError(
        'request_timeout',
        `the request did not arrive in time: headers are due within ${headersTimeout} ms, the whole request within ${requestTimeout} ms`,
        CLOSE,
      );
    case 'HPE_HEADER_OVERFLOW':
      return new HttpError('headers_too_large', `the request headers exceed ${maxHeaderSize} bytes`, CLOSE);
    // The client closed its side with a request unfinished: nobody is left to read an answer.
    case 'HPE_INVALID_EOF_STATE':
      return undefined;
    // A declared size past 2^64-1, which the parser cannot hold: a body far too large, not a malformed
    // request (a huge size sent with `Expect: 100-continue` is answered 413, as a smaller huge one is).
    case 'HPE_INVALID_CONTENT_LENGTH':
      if (error.reason === 'Content-Length overflow') return tooLarge();
  }
  if (!error.code?.startsWith('HPE_')) return undefined; // ECONNRESET and the like
  return new HttpError('malformed_request', `malformed request: ${error.reason ?? 'unparsable'}`, CLOSE);
}

/** node:http's own answers and silent drops, answered with Error bodies and logged; once a connection. */
export function answerBelowTheApp(
  server: Server,
  timeouts: Timeouts,
  log: AppOptions['log'],
  latestResponse: WeakMap<Socket, ServerResponse>,
) {
  const answered = new WeakSet<Duplex>();
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // node:http reports every later chunk of an unparsable connection again; the first answer stands.
    if (answered.has(socket)) return;
    const answer = describeClientError(error, timeouts);
    const response = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (answer && socket.writable && response?.req.complete) {
      // The bad bytes follow whole requests still being answered (pipelining): those answers go out whole,
      // and the last closes the connection (writes pipelined behind the first may have run already).
      answered.add(socket);
      const last = latestResponse.get(socket as Socket) ?? response;
      if (!last.req.complete && !last.headersSent) {
        // The bad bytes are in the body of a request pipelined behind: its own response carries the answer.
        log?.({ event: 'client_error', code: error.code ?? 'unknown', status: answer.status });
        sendError(last, answer);
      } else closeAfter(last, socket as Socket);
      return;
    }
    // The request cut off was answered early (a 401 before its body, say) and its body never came whole:
    // it has had its one answer, and another now would be taken for the answer to a next request.
    const answeredEarly = latestResponse.get(socket as Socket);
    const alreadyAnswered = !response && answeredEarly !== undefined && !answeredEarly.req.complete;
    if (!answer || !socket.writable || response?.headersSent || alreadyAnswered) return void socket.destroy();
    answered.add(socket);
    log?.({ event: 'client_error', code: error.code ?? 'unknown', status: answer.status });
    // A request already handed to the app (its body too slow): its own response carries the answer.
    if (response) sendError(response, answer);
    else endLingering(socket, rawErrorResponse(answer));
  });

  // Any Expect but 100-continue (which node:http answers itself).
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const refusal = `Expect ${quoted(String(req.headers.expect))} is not supported; only 100-continue is`;
    sendError(res, new HttpError('expectation_failed', refusal));
    log?.({ method: req.method ?? '', path: requestPath(req.url ?? '/'), status: 417, ms: 0 });
  });

  // Without a listener node:http drops a CONNECT without a word.
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    log?.({ method: req.method ?? '', path: req.url ?? '', status: 405, ms: 0 });
    endLingering(
      socket,
      rawErrorResponse(
        new HttpError('method_not_allowed', 'CONNECT is not supported: petinv serve is no proxy', {
          Allow: SERVER_METHODS,
        }),
      ),
    );
  });
}
