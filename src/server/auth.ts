import { hash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { HttpError } from './errors';

const digest = (text: string) => hash('sha256', text, 'buffer');

/**
 * The last valid Authorization header of a connection: a client sends the same one on every request, and
 * comparing it spares a hash each (a tenth of the GET path's JavaScript), telling nothing the connection
 * has not proved it knows.
 */
const VERIFIED = Symbol('the last valid Authorization header on this connection');

/** A check of `Authorization: Bearer <key>` against `apiKeys`; throws a 401 HttpError when it fails. */
export function createAuthenticator(apiKeys: readonly string[]): (req: IncomingMessage) => void {
  const digests = apiKeys.map(digest);
  return (req) => {
    const header = req.headers.authorization;
    const socket = req.socket as (Socket & { [VERIFIED]?: string }) | null;
    if (header !== undefined && socket?.[VERIFIED] === header) return;
    const challenge = { 'WWW-Authenticate': 'Bearer realm="petinv"' };
    if (!header)
      throw new HttpError(
        'unauthorized',
        'missing Authorization header; send "Authorization: Bearer <API key>"',
        challenge,
      );
    const match = /^Bearer[ \t]+(\S*)[ \t]*$/i.exec(header);
    if (!match)
      throw new HttpError('unauthorized', 'the Authorization header must use the Bearer scheme', challenge);
    const key = match[1] ?? '';
    if (key === '') throw new HttpError('unauthorized', 'the bearer API key is empty', challenge);
    // Digests have equal length, so every comparison takes the same time whatever the key.
    const presented = digest(key);
    let valid = false;
    for (const known of digests) valid = timingSafeEqual(presented, known) || valid;
    if (!valid)
      throw new HttpError('unauthorized', 'the API key is not valid', {
        'WWW-Authenticate': 'Bearer realm="petinv", error="invalid_token"',
      });
    if (socket) socket[VERIFIED] = header;
  };
}
