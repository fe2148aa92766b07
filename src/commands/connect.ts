import { version } from '../../package.json';
import { createClient, type InventoryClient, type RetryWait } from '../client/client';
import { httpTransport } from '../client/http-transport';
import { createListCache } from '../client/list-cache';
import type { Transport } from '../client/transport';
import type { ConnectionShape } from '../client/undici';
import { cacheDirectory } from '../config/paths';
import { chooseProxy, describeProxy } from '../config/proxy';
import { isLoopbackHost, type Settings } from '../config/settings';
import { loadSettings, resolveTarget, START_SERVE, type Target } from '../config/target';
import { stringifyJson } from '../contract/json';
import { configError, PetinvError } from '../errors';
import type { CommandContext } from '../output/context';
import { createHttpTrace, traceLevel } from '../output/http-trace';
import type { GlobalFlags } from './flags';
import { resolveLimits } from './limits';

/** What a command works with, resolved once from its flags: the service and its client. */
export type Connection = Target & { client: InventoryClient };

/** A warning on stderr: a JSON line with --json, as the failure after it may be, so that a script reads both. */
export function writeWarning(context: CommandContext, message: string): void {
  context.stderr.write(
    context.json ? `${stringifyJson({ warning: { message } })}\n` : `petinv: warning: ${message}\n`,
  );
}

/**
 * `local` with no serve registered falls back to serve's default address; when nothing answers there,
 * the message says that no serve is running, not merely that an address is unreachable.
 */
function explainNoServe(client: InventoryClient, baseUrl: string): InventoryClient {
  const explain = (error: unknown): never => {
    if (error instanceof PetinvError && error.body.code === 'network')
      throw new PetinvError(
        'network',
        `no petinv serve is running for local (nothing answers at ${baseUrl}); ${START_SERVE}`,
        error.body,
      );
    throw error;
  };
  return {
    get storeId() {
      return client.storeId;
    },
    async *streamInventory() {
      try {
        yield* client.streamInventory();
      } catch (error) {
        explain(error);
      }
    },
    listInventory: () => client.listInventory().catch(explain),
    findInventoryItem: (petId) => client.findInventoryItem(petId).catch(explain),
    pollInventory: (etag) => client.pollInventory(etag).catch(explain),
    updateInventory: (petId, quantity, ifQuantity) =>
      client.updateInventory(petId, quantity, ifQuantity).catch(explain),
  };
}

/** How requests reach the target: directly or by the proxy, traced with -v; refused if the key goes in clear. */
async function transportTo(
  target: Target,
  flags: GlobalFlags,
  context: CommandContext,
  { onRetryWait }: ReturnType<typeof resolveLimits>,
  shape: ConnectionShape | undefined,
): Promise<{ transport: Transport; onRetryWait: ((wait: RetryWait) => void) | undefined }> {
  const url = new URL(target.baseUrl);
  const proxy = chooseProxy(url, context.env);
  // The key leaves this machine unencrypted only over http to a host that is not loopback. Through a proxy
  // the same holds: a loopback service is never proxied, an http service is carried as clear text by the
  // proxy's CONNECT tunnel (first hop and last), and an https service is encrypted end to end inside it.
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname) && !flags.insecure) {
    const via = proxy ? ` through ${describeProxy(proxy)}` : '';
    throw configError(
      `refusing to send the API key for ${target.envName} in clear text to ${target.baseUrl}${via}; use an https URL, or pass --insecure`,
    );
  }
  // One request at a time, straight to the service: node:http. A proxy's tunnel, or a bulk run's connections,
  // at most --concurrency of them (with --pipelining 1 too: undici would open another whenever an update
  // came before the last answer's connection was free), each of which may carry several updates once the
  // service shows it keeps connections (undici-transport.ts): undici, loaded only then.
  let transport = httpTransport();
  if (proxy || shape) {
    const { createAgent, createProxyAgent } = await import('../client/undici');
    const { undiciTransport } = await import('../client/undici-transport');
    const dispatcher = proxy
      ? await createProxyAgent(flags.timeout, proxy.url.href, shape)
      : createAgent(flags.timeout, shape);
    transport = undiciTransport(dispatcher, {
      proxy: proxy && describeProxy(proxy),
      pipelining:
        shape !== undefined && shape.pipelining > 1 ? { connections: shape.connections } : undefined,
    });
  }
  const level = traceLevel(flags.verbose, context.env);
  if (level === 0) return { transport, onRetryWait };
  const trace = createHttpTrace({
    level,
    write: (line) => context.stderr.write(`${line}\n`),
    secrets: [target.apiKey],
  });
  return {
    transport: trace.transport(transport),
    onRetryWait: (wait) => {
      trace.onRetryWait(wait);
      onRetryWait?.(wait);
    },
  };
}

/** The command's target (config/target.ts) and its client, refusing what would fail or leak before any request. */
export async function connect(
  flags: GlobalFlags,
  context: CommandContext,
  options: {
    /** Settings the command already resolved (status, login), used as they are. */
    settings?: Settings;
    /** A bulk run's connections (see bulkShape in options.ts); otherwise one request on each at a time. */
    shape?: ConnectionShape;
  } = {},
): Promise<Connection> {
  const limits = resolveLimits(flags, context);
  const target = resolveTarget(options.settings ?? loadSettings(flags, context.env), context.env);
  const { envName, baseUrl, where } = target;
  const { transport, onRetryWait } = await transportTo(target, flags, context, limits, options.shape);
  const client = createClient({
    baseUrl,
    apiKey: target.apiKey,
    envName: where,
    targetWords: target.words,
    addressed: where !== envName,
    timeoutMs: flags.timeout,
    retries: flags.retries,
    ...limits,
    onRetryWait,
    transport,
    userAgent: `petinv/${version}`,
    onWarning: (message) => writeWarning(context, message),
    refusedKeyAdvice: target.refusedKeyAdvice,
    listCache:
      flags.cache === false
        ? undefined
        : createListCache({
            directory: cacheDirectory(context.env),
            envName,
            baseUrl,
            maxBodyBytes: limits.maxBodyBytes,
          }),
  });
  return { ...target, client: target.noServe ? explainNoServe(client, baseUrl) : client };
}
