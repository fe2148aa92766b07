import { AsyncLocalStorage } from 'node:async_hooks';
import { channel } from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';
import type { RetryWait } from '../client/client';
import { type Transport, TransportError } from '../client/transport';
import { printableWithout, REDACTED } from '../printable';

/**
 * `-v` and `PETINV_DEBUG=http`: every HTTP exchange on stderr, as curl -v shows it, the response headers
 * as they came off the wire (the transports' diagnostics channels); `-vv` (`http,body`) adds the bodies.
 *
 * No line ever carries a secret: Authorization values are replaced, and every line (an echoed header, a
 * body, a URL) has each secret removed before and after it is made printable, so a key split by an
 * escape sequence is not rejoined on the terminal.
 */

export type TraceLevel = 0 | 1 | 2;

const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization']);
const HEADER_LINE_LIMIT = 1000;
const BODY_LIMIT = 2000;

/** The level asked for: the count of -v, or PETINV_DEBUG's words `http` (1) and `body` (2). */
export function traceLevel(verbose: number | boolean | undefined, env: NodeJS.ProcessEnv): TraceLevel {
  const words = (env.PETINV_DEBUG ?? '').toLowerCase().split(/[\s,]+/);
  const fromEnv = words.includes('body') ? 2 : words.includes('http') ? 1 : 0;
  const fromFlag = typeof verbose === 'number' ? verbose : verbose ? 1 : 0;
  return Math.min(Math.max(fromFlag, fromEnv), 2) as TraceLevel;
}

interface Attempt {
  say: (line: string, limit?: number) => void;
  started: number;
  /** Whether the wire told its status and headers (a transport's channel); else the transport's answer does. */
  sawHeaders: boolean;
}

/** The attempt whose request is being created right now: how a channel message finds its trace. */
const creating = new AsyncLocalStorage<Attempt>();
const attempts = new WeakMap<object, Attempt>();
let subscribed = false;

const milliseconds = (since: number) => `${(performance.now() - since).toFixed(1)} ms`;

interface HeadersMessage {
  request: object;
  response: { statusCode: number; statusText?: string; headers: Array<Buffer | string> };
}

/** Subscribes once per process; a message about a request no trace created is ignored at once. */
function subscribeToTransports() {
  if (subscribed) return;
  subscribed = true;
  const created = (message: unknown) => {
    const attempt = creating.getStore();
    if (attempt) attempts.set((message as { request: object }).request, attempt);
  };
  channel('undici:request:create').subscribe(created);
  const headersCame = (message: unknown) => {
    const { request, response } = message as HeadersMessage;
    const attempt = attempts.get(request);
    if (!attempt) return;
    attempt.sawHeaders = true;
    const text = response.statusText ? ` ${response.statusText}` : '';
    attempt.say(`< ${response.statusCode}${text} (headers after ${milliseconds(attempt.started)})`);
    const { headers } = response;
    for (let index = 0; index + 1 < headers.length; index += 2) {
      const name = String(headers[index]);
      attempt.say(`< ${name}: ${headerValue(name, String(headers[index + 1]))}`);
    }
  };
  channel('undici:request:headers').subscribe(headersCame);
  channel('http.client.request.start').subscribe(created);
  channel('http.client.response.finish').subscribe((message) => {
    const { request, response } = message as { request: object; response: IncomingMessage };
    // node:http reads the status line's and headers' bytes as Latin-1; undici's are shown as UTF-8.
    const utf8 = (text = '') => Buffer.from(text, 'latin1');
    const headers = response.rawHeaders.map(utf8);
    const statusText = utf8(response.statusMessage).toString();
    headersCame({ request, response: { statusCode: response.statusCode, statusText, headers } });
  });
}

function headerValue(name: string, value: string): string {
  if (!SECRET_HEADERS.has(name.toLowerCase())) return value;
  const scheme = /^\s*(\S+)\s/.exec(value)?.[1];
  return scheme ? `${scheme} ${REDACTED}` : REDACTED;
}

/** A streamed body (the list) passes as it arrives; its end, and its start with -vv, are told then. */
async function* tracedBody(
  chunks: AsyncIterable<Uint8Array>,
  status: number,
  attempt: Attempt,
  level: number,
) {
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let size = 0;
  for await (const chunk of chunks) {
    size += chunk.byteLength;
    if (level >= 2 && keptBytes < BODY_LIMIT * 4) {
      kept.push(Buffer.from(chunk));
      keptBytes += chunk.byteLength;
    }
    yield chunk;
  }
  attempt.say(`* ${status} complete after ${milliseconds(attempt.started)}`);
  if (level >= 2) attempt.say(`< body (${size} bytes): ${Buffer.concat(kept).toString('utf8')}`, BODY_LIMIT);
}

/** The transport wrapper that traces each exchange, and the client's onRetryWait. */
export function createHttpTrace(options: {
  level: 1 | 2;
  write: (line: string) => void;
  /** Texts no line may show: the API key. */
  secrets: readonly string[];
}) {
  subscribeToTransports();
  const say = (line: string, limit = HEADER_LINE_LIMIT) =>
    options.write(printableWithout(line, options.secrets, limit));
  const body = (label: string, text: string) =>
    options.level >= 2 && say(`${label} body (${Buffer.byteLength(text)} bytes): ${text}`, BODY_LIMIT);

  const transport =
    (inner: Transport): Transport =>
    async (request) => {
      const attempt: Attempt = { say, started: performance.now(), sawHeaders: false };
      say(`> ${request.method} ${request.url}`);
      for (const [name, value] of Object.entries(request.headers))
        say(`> ${name}: ${headerValue(name, value)}`);
      if (request.body !== undefined) body('>', request.body);
      try {
        const response = await creating.run(attempt, () => inner(request));
        if (!attempt.sawHeaders) say(`< ${response.status}`);
        if (response.body)
          return { ...response, body: tracedBody(response.body, response.status, attempt, options.level) };
        say(`* ${response.status} complete after ${milliseconds(attempt.started)}`);
        body('<', response.text);
        return response;
      } catch (error) {
        const why =
          error instanceof TransportError ? `${error.reason}: ${error.detail}` : (error as Error).message;
        say(`* ${request.method} ${request.url} failed after ${milliseconds(attempt.started)} (${why})`);
        throw error;
      }
    };

  const onRetryWait = ({ operation, ms, status, retryAfter }: RetryWait) => {
    const why =
      status === undefined ? 'no answer' : `${status}${retryAfter ? ', as its Retry-After asked' : ''}`;
    say(`* retrying ${operation} in ${ms} ms (${why})`);
  };

  return { transport, onRetryWait };
}
