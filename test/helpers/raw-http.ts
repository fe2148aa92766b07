import { connect, type Socket } from 'node:net';

/** HTTP over a bare socket, for requests no HTTP client would send. */

export interface ParsedResponse {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body: string;
  // biome-ignore lint/suspicious/noExplicitAny: a test reads whatever the server answered
  json: () => any;
}

export function openSocket(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Everything the server sends until it closes the connection (a test timeout catches a server that never does). */
export function readUntilClosed(socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    // A reset after the answer still leaves the answer: what arrived is what counts.
    socket.on('error', () => {});
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
  });
}

/** Sends `request` on a new connection and returns everything received until the server closes it. */
export async function exchange(port: number, request: string | Buffer): Promise<string> {
  const socket = await openSocket(port);
  const received = readUntilClosed(socket);
  socket.write(request);
  return received;
}

/**
 * Splits a byte stream into the responses it holds: interim 1xx answers are skipped, a body is as long
 * as its Content-Length (none for HEAD requests, given in `bodiless`, and for 304).
 */
export function parseResponses(text: string, bodiless = false): ParsedResponse[] {
  const responses: ParsedResponse[] = [];
  let rest = text;
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n');
    if (end === -1) throw new Error(`incomplete response head: ${JSON.stringify(rest.slice(0, 200))}`);
    const [statusLine = '', ...lines] = rest.slice(0, end).split('\r\n');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
    if (!status) throw new Error(`not a status line: ${JSON.stringify(statusLine)}`);
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = bodiless || status === 304 || status < 200 ? 0 : Number(headers['content-length'] ?? 0);
    const body = Buffer.from(rest.slice(end + 4, end + 4 + length), 'latin1').toString('utf8');
    rest = rest.slice(end + 4 + length);
    if (status >= 200) responses.push({ status, headers, body, json: () => JSON.parse(body) });
  }
  return responses;
}

/** The one response of an exchange. */
export function parseResponse(text: string, bodiless = false): ParsedResponse {
  const responses = parseResponses(text, bodiless);
  if (responses.length !== 1) throw new Error(`expected one response, got ${responses.length}: ${text}`);
  return responses[0] as ParsedResponse;
}
