import type { IncomingMessage, ServerResponse } from 'node:http';
import { BODY_LIMIT_BYTES } from '../contract/limits';
import { tryOr } from '../files/file-system';
import { CLOSE, HttpError } from './errors';

/** The client went away before its request body was complete: nobody is left to answer. */
export class ClientAborted extends Error {}

/** A value from the request, quoted and cut short, for an error message. */
export const quoted = (text: string) => JSON.stringify(text.length > 64 ? `${text.slice(0, 64)}…` : text);

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

/** A petId as it appears in the path, percent-escapes decoded; undefined for a broken escape. */
export function decodePathSegment(text: string): string | undefined {
  return text.includes('%') ? tryOr(() => decodeURIComponent(text), undefined) : text;
}

export function isJsonContentType(value: string): boolean {
  const type = value.split(';')[0]?.trim().toLowerCase() ?? '';
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

/** Refuses a body serve would otherwise misread: compressed (a content or transfer coding), or not UTF-8 (RFC 7694). */
export function checkBodyEncoding(req: IncomingMessage, contentType: string | undefined) {
  const encoding = req.headers['content-encoding']?.trim().toLowerCase();
  if (encoding && encoding !== 'identity')
    throw new HttpError(
      'unsupported_media_type',
      `Content-Encoding ${quoted(encoding)} is not supported; send the body uncompressed`,
      { 'Accept-Encoding': 'identity' },
    );
  // node:http removes only the chunked framing; any other transfer coding would be read as plain text.
  const transfer = req.headers['transfer-encoding']?.toLowerCase() ?? 'chunked';
  if (transfer.split(',').some((coding) => coding.trim() !== 'chunked'))
    throw new HttpError(
      'unsupported_media_type',
      `Transfer-Encoding ${quoted(transfer)} is not supported; send the body with chunked alone or with Content-Length`,
    );
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(contentType ?? '')?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8')
    throw new HttpError(
      'unsupported_media_type',
      `charset ${quoted(charset)} is not supported; JSON bodies must be UTF-8`,
    );
}

const CONTINUE = Symbol('sends 100 Continue, once the request has been checked');
type ExpectingRequest = IncomingMessage & { [CONTINUE]?: () => void };

/**
 * `Expect: 100-continue` as docs/serve-operations.md says: the 100 is held back until the request is checked;
 * until then a final answer closes the connection, as a body sent after it must not be read as a request.
 */
export function holdContinue(req: IncomingMessage, res: ServerResponse, mayKeepAlive: () => boolean): void {
  const keepAlive = res.shouldKeepAlive;
  res.shouldKeepAlive = false;
  (req as ExpectingRequest)[CONTINUE] = () => {
    (req as ExpectingRequest)[CONTINUE] = undefined;
    if (res.headersSent) return;
    // Unless the connection was meant to close meanwhile (the server began to stop, say).
    res.shouldKeepAlive = keepAlive && mayKeepAlive();
    res.writeContinue();
  };
}

export const tooLarge = () =>
  new HttpError('payload_too_large', `request body exceeds ${BODY_LIMIT_BYTES} bytes`, CLOSE);

/** The whole body as UTF-8 text, refused past BODY_LIMIT_BYTES; rejects with ClientAborted when cut off. */
export function readBody(req: IncomingMessage): Promise<string> {
  if (Number(req.headers['content-length']) > BODY_LIMIT_BYTES) return Promise.reject(tooLarge());
  // Gone already (during --latency, say): its 'error' and 'close' have been emitted, and 'end' never comes.
  if (req.destroyed && !req.complete) return Promise.reject(new ClientAborted());
  // Everything about the request has been checked: a client waiting to send its body may send it now.
  (req as ExpectingRequest)[CONTINUE]?.();
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
    // 'close' comes after every request, answered ones too: only an incomplete one was cut off (building an
    // Error for each answered request cost a tenth of the PATCH path's CPU).
    req.on('close', () => {
      if (!req.complete) reject(new ClientAborted());
    });
  });
}
