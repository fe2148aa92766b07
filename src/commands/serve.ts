import { randomBytes } from 'node:crypto';
import { readConfigFile, updateConfigFile } from '../config/file';
import { configFilePath, defaultDataFile } from '../config/paths';
import { PetinvError, usageError } from '../errors';
import type { RequestLogEntry } from '../server/app';
import { startInventoryServer } from '../server/start';
import { parseWholeNumber } from './arguments';
import type { CommandContext } from './context';

/** The options as commander hands them over: text, checked here. */
export interface ServeFlags {
  host: string;
  port: string;
  data?: string;
  inMemory?: boolean;
  apiKey?: string[];
  seed?: string;
  latency?: string;
  failRate?: string;
  rateLimit?: string;
  quiet?: boolean;
}

function parseLatency(text: string | undefined): { min: number; max: number } | undefined {
  if (text === undefined) return undefined;
  const match = /^(\d+)(?:-(\d+))?$/.exec(text);
  const min = Number(match?.[1]);
  const max = match?.[2] === undefined ? min : Number(match[2]);
  if (!match || max < min || max > 60_000) {
    throw usageError(`--latency ${text}: must be milliseconds, MS or MIN-MAX, at most 60000`);
  }
  return { min, max };
}

function parseFailRate(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const rate = Number(text);
  if (text.trim() === '' || !(rate >= 0 && rate <= 1))
    throw usageError(`--fail-rate ${text}: must be a fraction from 0 to 1`);
  return rate;
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
  // Every option is checked before a key is generated or a file is touched.
  const port = parseWholeNumber(flags.port, '--port', 0, 65535);
  const seed = parseWholeNumber(flags.seed, '--seed', 0, 10_000_000);
  const latency = parseLatency(flags.latency);
  const failRate = parseFailRate(flags.failRate);
  const rateLimit = parseWholeNumber(flags.rateLimit, '--rate-limit', 1, 1_000_000);
  // --in-memory alone keeps nothing on disk; with --data it loads that file and never writes it.
  const dataFile = flags.data ?? (flags.inMemory ? undefined : defaultDataFile(env));
  const apiKeys = await resolveServeKeys(flags, env);
  const log = flags.quiet
    ? undefined
    : (entry: RequestLogEntry) => stderr.write(`${json ? JSON.stringify(entry) : formatLogEntry(entry)}\n`);

  const running = await startInventoryServer({
    host: flags.host,
    port,
    dataFile,
    inMemory: flags.inMemory,
    seed,
    apiKeys: apiKeys.keys,
    latency,
    failRate,
    rateLimit,
    log,
  });

  const data = running.dataFile
    ? `${running.dataFile}${running.readOnly ? ' (loaded, never written)' : ''}`
    : 'in memory';
  if (running.dataFormat === 'array' && !running.readOnly) {
    const notice = `${running.dataFile} is a plain JSON array; serve rewrites it in its own format when it first saves`;
    stderr.write(
      json ? `${JSON.stringify({ event: 'notice', message: notice })}\n` : `petinv serve: ${notice}\n`,
    );
  }
  if (json) {
    const ready = {
      event: 'listening',
      baseUrl: running.baseUrl,
      host: running.host,
      port: running.port,
      dataFile: running.dataFile ?? null,
      readOnly: running.readOnly,
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
