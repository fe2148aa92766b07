import http from 'node:http';
import type { Socket } from 'node:net';
import { Exchange } from './exchange';
import type { Transport } from './transport';

/**
 * The transport of a command that sends one request at a time, straight to the service: node:http, whose
 * parser is Node's own. undici's modules and its WebAssembly parser are most of what a cold `petinv list`
 * spent beyond a plain node:http script (docs/performance.md); a bulk run, a proxy and the library keep
 * undici. It drives the same Exchange as undici does, so deadlines, size limits, streamed bodies and what
 * a failure means (sent or not, before or after the answer) are decided in one place.
 */
export function httpTransport(): Transport {
  type Side = { module: Pick<typeof http, 'request' | 'Agent'>; agent: http.Agent };
  // Each protocol's module and agent, made once, even for requests that start together.
  const sides = new Map<string, Promise<Side>>();
  const sideFor = async (protocol: string): Promise<Side> => {
    // https (and TLS) is loaded only when asked for: a plain-http start would pay for it.
    const module: Side['module'] = protocol === 'https:' ? await import('node:https') : http;
    return { module, agent: new module.Agent({ keepAlive: true }) };
  };
  return async (request) => {
    const url = new URL(request.url);
    if (!sides.has(url.protocol)) sides.set(url.protocol, sideFor(url.protocol));
    const { module, agent } = await (sides.get(url.protocol) as Promise<Side>);
    return new Promise((resolve, reject) => {
      const exchange = new Exchange(
        request.maxBodyBytes ?? Number.POSITIVE_INFINITY,
        request.timeoutMs,
        resolve,
        reject,
        undefined,
        request.stream === true,
      );
      let incoming: http.IncomingMessage | undefined;
      let outgoing: http.ClientRequest | undefined;
      const controller = {
        // Without the reason, which the exchange has given its caller: Node would emit it again, and on a
        // socket it is releasing to the agent, where no listener is left, as an uncaught exception.
        abort: () => outgoing?.destroy(),
        pause: () => incoming?.pause(),
        resume: () => incoming?.resume(),
      };
      // Node words a broken answer by its parser's code (HPE_…): the reason says what was wrong.
      const failed = (error: Error & { code?: string; reason?: string }) =>
        exchange.onResponseError(
          controller,
          error.code?.startsWith('HPE_') ? new Error(`not an HTTP/1.1 answer: ${error.reason}`) : error,
        );
      // Bytes after a whole answer belong to no request, as undici has it: the answer stands.
      const broke = (error: Error) => incoming?.complete || failed(error);
      const closed = (detail: string) => () => failed(new Error(detail));
      try {
        outgoing = module.request(url, {
          method: request.method,
          headers: request.headers,
          // A write goes on a connection of its own: on one kept from a read, a service closing it as idle
          // just then would leave a write that never arrived "outcome unknown".
          agent: request.method === 'GET' ? agent : false,
          // Answers are parsed strictly whatever NODE_OPTIONS says (--insecure-http-parser), as undici does.
          insecureHTTPParser: false,
        });
      } catch (error) {
        // A request node:http refuses outright (a header it cannot send), as undici's dispatch refuses it.
        return failed(error as Error);
      }
      exchange.onRequestStart(controller);
      outgoing.on('error', broke);
      outgoing.on('close', () => incoming ?? closed('the connection closed before an answer')());
      outgoing.on('upgrade', (_answer, socket: Socket) => {
        // Node hands over the connection for a protocol petinv never asked for.
        socket.destroy();
        failed(new Error('an upgrade to another protocol, not an answer'));
      });
      outgoing.on('finish', () => exchange.onRequestSent());
      outgoing.on('response', (answer) => {
        incoming = answer;
        // Node hands over an interim answer (1xx) only as an event of its own: this one claims to be final.
        if ((answer.statusCode ?? 0) < 200)
          return failed(new Error(`a final answer of status ${answer.statusCode}`));
        exchange.onResponseStart(controller, answer.statusCode ?? 0, answer.headers);
        answer.on('error', broke);
        answer.on('data', (chunk: Buffer) => exchange.onResponseData(controller, chunk));
        answer.on('end', () => exchange.onResponseEnd());
        answer.on(
          'close',
          () => answer.complete || closed('the connection closed in the middle of the answer')(),
        );
      });
      outgoing.end(request.body);
    });
  };
}
