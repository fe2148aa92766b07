import { randomBytes } from 'node:crypto';
import { InvalidArgumentError } from 'commander';
import { readConfigFile, updateConfigFile } from '../config/file';
import { configFilePath, defaultDataFile } from '../config/paths';
import { PetinvError } from '../errors';
import type { RequestLogEntry } from '../server/app';
import { startInventoryServer } from '../server/start';
import type { CommandContext } from './context';

export interface ServeFlags {
  host: string;
  port: number;
  data?: string;
  inMemory?: boolean;
  apiKey?: string[];
  seed?: number;
  latency?: { min: number; max: number };
  failRate?: number;
  rateLimit?: number;
  quiet?: boolean;
}

export function parsePort(text: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65535)
    throw new InvalidArgumentError('must be a port number from 0 to 65535');
  return port;
}

export function parseSeed(text: string): number {
  const count = Number(text);
  if (!/^\d+$/.test(text) || count > 10_000_000)
    throw new InvalidArgumentError('must be a whole number from 0 to 10000000');
  return count;
}

export function parseLatency(text: string): { min: number; max: number } {
  const match = /^(\d+)(?:-(\d+))?$/.exec(text);
  const min = Number(match?.[1]);
  const max = match?.[2] === undefined ? min : Number(match[2]);
  if (!match || max < min || max > 60_000)
    throw new InvalidArgumentError('must be milliseconds, MS or MIN-MAX, at most 60000');
  return { min, max };
}

export function parseFailRate(text: string): number {
  const rate = Number(text);
  if (text.trim() === '' || !(rate >= 0 && rate <= 1))
    throw new InvalidArgumentError('must be a fraction from 0 to 1');
  return rate;
}

export function parseRateLimit(text: string): number {
  const limit = Number(text);
  if (!/^\d+$/.test(text) || limit < 1)
    throw new InvalidArgumentError('must be a whole number of requests per second, at least 1');
  return limit;
}

interface ResolvedKeys {
  keys: string[];
  source: string;
  generated?: string;
}

/** --api-key, then PETINV_SERVE_API_KEY, then the key stored for `local`, else a new one stored there. */
async function resolveServeKeys(flags: ServeFlags, env: NodeJS.ProcessEnv): Promise<ResolvedKeys> {
  if (flags.apiKey && flags.apiKey.length > 0) return { keys: flags.apiKey, source: '--api-key' };
  if (env.PETINV_SERVE_API_KEY) return { keys: [env.PETINV_SERVE_API_KEY], source: 'PETINV_SERVE_API_KEY' };
  const stored = readConfigFile(env).environments.local?.apiKey;
  if (stored) return { keys: [stored], source: `the local environment's key in ${configFilePath(env)}` };
  const generated = `pk_${randomBytes(24).toString('base64url')}`;
  const path = await updateConfigFile((config) => {
    config.environments.local = { ...config.environments.local, apiKey: generated };
  }, env);
  return { keys: [generated], source: `generated, stored for the local environment in ${path}`, generated };
}

function formatLogEntry(entry: RequestLogEntry): string {
  return 'fault' in entry
    ? `${entry.method} ${entry.path} unexpected fault: ${entry.fault}`
    : `${entry.method} ${entry.path} ${entry.status} ${entry.ms}ms`;
}

export async function runServe(flags: ServeFlags, context: CommandContext): Promise<void> {
  const { env, stderr, json } = context;
  const dataFile = flags.inMemory ? undefined : (flags.data ?? defaultDataFile(env));
  const apiKeys = await resolveServeKeys(flags, env);
  const log = flags.quiet
    ? undefined
    : (entry: RequestLogEntry) => stderr.write(`${json ? JSON.stringify(entry) : formatLogEntry(entry)}\n`);

  const running = await startInventoryServer({
    host: flags.host,
    port: flags.port,
    dataFile,
    seed: flags.seed,
    apiKeys: apiKeys.keys,
    latency: flags.latency,
    failRate: flags.failRate,
    rateLimit: flags.rateLimit,
    log,
  });

  const data = dataFile ?? 'in memory';
  if (json) {
    const ready = {
      event: 'listening',
      baseUrl: running.baseUrl,
      host: running.host,
      port: running.port,
      dataFile: running.dataFile ?? null,
      pets: running.pets,
      seeded: running.seeded,
      keySource: apiKeys.source,
      ...(apiKeys.generated ? { apiKey: apiKeys.generated } : {}),
    };
    stderr.write(`${JSON.stringify(ready)}\n`);
  } else {
    if (apiKeys.generated)
      stderr.write(`petinv serve: API key ${apiKeys.generated} (shown once; petinv --env local uses it)\n`);
    const fresh = running.seeded ? ', new' : '';
    stderr.write(
      `petinv serve: listening on ${running.baseUrl} · data ${data} (${running.pets} pets${fresh}) · key: ${apiKeys.source}\n`,
    );
  }

  await new Promise<void>((resolve, reject) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      // A second signal while draining means "now": cut the connections; the flush still completes.
      process.once(signal, () => {
        running.server.closeAllConnections();
        reject(
          new PetinvError('aborted', `${signal} again: requests in flight were cut off`, { code: 'aborted' }),
        );
      });
      if (json) stderr.write(`${JSON.stringify({ event: 'stopping', signal })}\n`);
      else stderr.write(`petinv serve: ${signal}, finishing requests in flight and flushing ${data}\n`);
      running.close().then(resolve, reject);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
