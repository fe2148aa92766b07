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
  const sides = new Map<string, Side>();
  const sideFor = async (protocol: string) => {
    // https (and TLS) is loaded only when asked for: a plain-http start would pay for it.
    const module: Side['module'] = protocol === 'https:' ? await import('node:https') : http;
    const side = { module, agent: new module.Agent({ keepAlive: true }) };
    sides.set(protocol, side);
    return side;
  };
  return async (request) => {
    const url = new URL(request.url);
    const { module, agent } = sides.get(url.protocol) ?? (await sideFor(url.protocol));
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
      const failed = (error: Error) => exchange.onResponseError(controller, error);
      // A connection closed with no answer, or in the middle of one: Node says no more than that.
      const reset = (detail: string) => () =>
        failed(Object.assign(new Error(detail), { code: 'ECONNRESET' }));
      try {
        outgoing = module.request(url, { method: request.method, headers: request.headers, agent });
      } catch (error) {
        // A request node:http refuses outright (a header it cannot send), as undici's dispatch refuses it.
        return failed(error as Error);
      }
      exchange.onRequestStart(controller);
      outgoing.on('error', failed);
      outgoing.on('close', () => incoming ?? reset('socket hang up')());
      outgoing.on('upgrade', (_answer, socket: Socket) => {
        // Node hands over the connection for a protocol petinv never asked for.
        socket.destroy();
        failed(new Error('an upgrade to another protocol, not an answer'));
      });
      outgoing.on('finish', () => exchange.onRequestSent());
      outgoing.on('response', (answer) => {
        incoming = answer;
        exchange.onResponseStart(controller, answer.statusCode ?? 0, answer.headers);
        answer.on('error', failed);
        answer.on('data', (chunk: Buffer) => exchange.onResponseData(controller, chunk));
        answer.on('end', () => exchange.onResponseEnd());
        answer.on('close', () => answer.complete || reset('aborted')());
      });
      outgoing.end(request.body);
    });
  };
}
