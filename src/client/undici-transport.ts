import { Exchange } from './exchange';
import { Pipelining } from './pipelining';
import type { Transport } from './transport';
import type { Dispatcher } from './undici';

/**
 * The transport petinv uses: undici's dispatcher API (an Agent, or a proxy agent) with a handler of its
 * own, a fraction of the request API's or fetch's CPU per request. `proxy` names the proxy, so a failure to
 * reach it is not blamed on the service. With `pipelining` (a bulk run's connections), requests that may be
 * pipelined are marked so once the service shows it keeps connections (Pipelining); until then one goes on
 * each connection at a time, the rest waiting here, not in undici's queue, where the wait would count
 * against --timeout.
 */
export function undiciTransport(
  dispatcher: Dispatcher,
  options: { proxy?: string; pipelining?: { connections: number } } = {},
): Transport {
  const pipelining = options.pipelining ? new Pipelining() : undefined;
  const limit = options.pipelining?.connections;
  /** Requests handed to undici and not yet settled, pipelined or not. */
  let active = 0;
  const waiting: (() => void)[] = [];
  // A connection open with nothing on it; without stats (a proxy agent), the headers are taken at their word.
  const keptConnection = (origin: string) => () => {
    const stats = (dispatcher as { stats?: Record<string, { connected: number; running: number }> }).stats;
    const pool = stats?.[origin];
    return stats === undefined || (pool !== undefined && pool.connected > pool.running);
  };
  const drain = () => {
    while (waiting.length > 0 && (pipelining?.on === true || active < (limit as number)))
      (waiting.shift() as () => void)();
  };
  return (request) =>
    new Promise((resolve, reject) => {
      let { origin, path } = request;
      if (origin === undefined || path === undefined) {
        const url = new URL(request.url);
        origin = url.origin;
        path = url.pathname + url.search;
      }
      const { method, headers, body } = request;
      const start = () => {
        pipelining?.decide(keptConnection(origin));
        // undici pipelines only requests marked idempotent and not `blocking`; a streamed body (the list)
        // may take long, and would hold up what waits behind it. Everything else goes as it always went.
        const pipelines = pipelining?.on === true && request.idempotent === true && request.stream !== true;
        let done = (): void => {};
        if (limit !== undefined) {
          // Once pipelining is on, undici queues what it does not pipeline (a list read during a bulk run)
          // behind the connection's answers, which are quick; held here, it would wait for all of them.
          if (!pipelines && pipelining?.on !== true && active >= limit) {
            waiting.push(start);
            return;
          }
          active++;
          done = () => {
            done = () => {};
            active--;
            // Once undici is done with the answer's connection: kept or closed, as keptConnection sees it.
            queueMicrotask(drain);
          };
        }
        const exchange = new Exchange(
          request.maxBodyBytes ?? Number.POSITIVE_INFINITY,
          request.timeoutMs,
          (response) => {
            resolve(response);
            done();
          },
          (error) => {
            reject(error);
            done();
          },
          options.proxy,
          request.stream === true,
          pipelining && { learn: pipelining, pipelined: pipelines },
        );
        try {
          dispatcher.dispatch(
            {
              origin,
              path,
              method: method as Dispatcher.HttpMethod,
              headers,
              body,
              ...(pipelines && { idempotent: true, blocking: false }),
            },
            exchange,
          );
        } catch (error) {
          // A request the dispatcher refuses outright (a closed agent, an invalid header).
          exchange.onResponseError(undefined as never, error as Error);
        }
      };
      start();
    });
}
