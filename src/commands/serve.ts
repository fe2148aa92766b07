import { randomBytes } from 'node:crypto';
import { open } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import { readConfigFile, updateConfigFile } from '../config/file';
import { configFilePath, defaultDataFile } from '../config/paths';
import { loopbackBaseUrl, registerServe, type ServeRegistration } from '../config/serve-records';
import { isLoopbackHost, UNSENDABLE_KEY_CHARACTER } from '../config/settings';
import { configError, PetinvError, usageError } from '../errors';
import { plural } from '../output/plural';
import type { ServeFlags } from '../program';
import type { RequestLogEntry } from '../server/app';
import { ServeError } from '../server/errors';
import { startInventoryServer } from '../server/start';
import type { CommandContext } from './context';

interface ResolvedKeys {
  keys: string[];
  source: string;
  generated?: string;
}

/** What a client can send in `Authorization: Bearer <key>`: visible ASCII, nothing else. */

/** Why no client could send this key, or undefined when one can; the key itself is never repeated. */
function unsendable(key: string): string | undefined {
  if (key === '') return 'a key is empty';
  if (UNSENDABLE_KEY_CHARACTER.test(key))
    return 'a key holds white space, a control character or a non-ASCII character, which no client can send';
  return undefined;
}

function checkKeys(keys: readonly string[], where: string) {
  for (const key of keys) {
    const problem = unsendable(key);
    if (problem) throw usageError(`${where}: ${problem}`);
  }
}

/** A key file larger than this is not a key file (and /dev/zero must not hang the start). */
const KEY_FILE_LIMIT = 1024 * 1024;

/** Keys one per line; blank lines (and so a trailing newline) are skipped, and a CR before a LF too. */
async function readKeyFile(path: string): Promise<string[]> {
  let text: string;
  try {
    const file = await open(path, 'r');
    try {
      const buffer = Buffer.alloc(KEY_FILE_LIMIT + 1);
      let size = 0;
      let bytesRead: number;
      do {
        ({ bytesRead } = await file.read(buffer, size, buffer.length - size));
        size += bytesRead;
      } while (bytesRead > 0 && size < buffer.length);
      if (size > KEY_FILE_LIMIT) throw usageError(`--api-key-file ${path}: larger than 1 MiB`);
      text = buffer.toString('utf8', 0, size);
    } finally {
      await file.close();
    }
  } catch (error) {
    if (error instanceof PetinvError) throw error;
    const { code } = error as NodeJS.ErrnoException;
    throw configError(`cannot read --api-key-file ${path} (${code ?? (error as Error).message})`);
  }
  const keys: string[] = [];
  for (const [index, raw] of text.split('\n').entries()) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '') continue;
    checkKeys([line], `--api-key-file ${path}, line ${index + 1}`);
    keys.push(line);
  }
  if (keys.length === 0) throw usageError(`--api-key-file ${path} holds no key`);
  return keys;
}

/**
 * --api-key and --api-key-file together, else PETINV_SERVE_API_KEY, else the key stored for `local`,
 * else a new one stored there. A key no client could send is refused before anything starts.
 */
async function resolveServeKeys(flags: ServeFlags, env: NodeJS.ProcessEnv): Promise<ResolvedKeys> {
  const fromFlag = flags.apiKey ?? [];
  checkKeys(fromFlag, '--api-key');
  if (flags.apiKeyFile !== undefined) {
    const fromFile = await readKeyFile(flags.apiKeyFile);
    const source = `--api-key-file ${flags.apiKeyFile}`;
    return {
      keys: [...fromFlag, ...fromFile],
      source: fromFlag.length > 0 ? `--api-key and ${source}` : source,
    };
  }
  if (fromFlag.length > 0) return { keys: fromFlag, source: '--api-key' };
  const fromEnv = env.PETINV_SERVE_API_KEY;
  if (fromEnv !== undefined) {
    checkKeys([fromEnv], 'PETINV_SERVE_API_KEY');
    return { keys: [fromEnv], source: 'PETINV_SERVE_API_KEY' };
  }
  const stored = readConfigFile(env).environments.local?.apiKey;
  if (stored) {
    const problem = unsendable(stored);
    if (problem)
      throw configError(
        `the local environment's key in ${configFilePath(env)} cannot be used: ${problem}; store another with petinv login --env local`,
      );
    return { keys: [stored], source: `the local environment's key in ${configFilePath(env)}` };
  }
  const generated = `pk_${randomBytes(24).toString('base64url')}`;
  const path = await updateConfigFile((config) => {
    config.environments.local = { ...config.environments.local, apiKey: generated };
  }, env);
  return { keys: [generated], source: `generated, stored for the local environment in ${path}`, generated };
}

/** Control characters from outside (a path, a fault's message) never reach the operator's terminal raw. */
const printable = (text: string) =>
  text.replace(/\p{Cc}/gu, (char) => `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`);

function formatLogEntry(entry: RequestLogEntry): string {
  if ('event' in entry)
    return entry.event === 'client_error'
      ? `client error ${entry.code}: answered ${entry.status}`
      : `refused ${entry.count} new connection(s): ${entry.limit} open, the --max-connections limit`;
  const request = printable(`${entry.method} ${entry.path}`);
  if ('fault' in entry) return `${request} unexpected fault: ${printable(entry.fault)}`;
  if ('aborted' in entry) return `${request} aborted by the client after ${entry.ms}ms`;
  return `${request} ${entry.status} ${entry.ms}ms`;
}

/** What a JSON log line calls each entry, so that `jq 'select(.event == "request")'` finds them. */
function eventOf(entry: RequestLogEntry): string {
  if ('event' in entry) return entry.event;
  if ('fault' in entry) return 'fault';
  if ('aborted' in entry) return 'request_aborted';
  return 'request';
}

/**
 * Writes lines to stderr until it breaks (EPIPE: `petinv serve 2>&1 | head -1`), then nothing: a lost
 * log is no reason to stop serving.
 */
function lineWriter(stream: Writable): (line: string) => void {
  let broken = false;
  stream.on('error', () => {
    broken = true;
  });
  return (line) => {
    if (broken || stream.destroyed || !stream.writable) return;
    try {
      stream.write(`${line}\n`);
    } catch {
      broken = true;
    }
  };
}

/**
 * One log event: with --json a line `{"time","event",...fields}`, else the time and the text, and any
 * details on indented lines of their own below it (so the first line stays short). Every event carries
 * the time in UTC (ISO 8601, milliseconds), so a log kept for days still reads in order.
 */
type LogEvent = (event: string, fields: object, text: string, details?: readonly string[]) => void;

function serveLog(stream: Writable, json: boolean): LogEvent {
  const say = lineWriter(stream);
  return (event, fields, text, details = []) => {
    const time = new Date().toISOString();
    if (json) say(JSON.stringify({ time, event, ...fields }));
    else say([`${time} ${text}`, ...details.map((detail) => `  ${detail}`)].join('\n'));
  };
}

/** A start or stop the machine refused is a config failure (exit 3) with the server's own message. */
function asCommandError(error: unknown): unknown {
  return error instanceof ServeError ? configError(error.message) : error;
}

/**
 * Leaves a record for `petinv --env local` (see config/serve-records.ts) while serve runs. A serve bound to
 * an address beyond loopback is not registered: local's key would leave the machine in clear text. A
 * record that cannot be written is a warning, never a reason to stop serving.
 */
function registerForLocal(
  running: { baseUrl: string; host: string; port: number; dataFile: string | undefined; readOnly: boolean },
  apiKey: string,
  env: NodeJS.ProcessEnv,
  warn: (message: string) => void,
): ServeRegistration | undefined {
  const baseUrl = loopbackBaseUrl(running.host, running.port, new URL(running.baseUrl).pathname);
  if (baseUrl === undefined) return undefined;
  try {
    return registerServe(
      { baseUrl, apiKey, dataFile: running.dataFile ?? null, readOnly: running.readOnly },
      env,
    );
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    warn(
      `petinv --env local will not find this serve: its record could not be written (${printable(code ?? message)})`,
    );
    return undefined;
  }
}

export async function runServe(flags: ServeFlags, context: CommandContext): Promise<void> {
  const { env, json } = context;
  // Every option was checked where it is declared; this pair is checked here, before a key is generated or a
  // file is touched.
  const { port, seed, latency, failRate, rateLimit, headersTimeout, requestTimeout, maxConnections } = flags;
  if (headersTimeout > requestTimeout)
    throw usageError(
      `--headers-timeout ${headersTimeout} must not exceed --request-timeout ${requestTimeout}`,
    );
  // --in-memory alone keeps nothing on disk; with --data it loads that file and never writes it.
  const dataFile = flags.data ?? (flags.inMemory ? undefined : defaultDataFile(env));
  const apiKeys = await resolveServeKeys(flags, env);
  const logEvent = serveLog(context.stderr, json);
  const log = flags.quiet
    ? undefined
    : (entry: RequestLogEntry) => logEvent(eventOf(entry), entry, formatLogEntry(entry));

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
    headersTimeout,
    requestTimeout,
    maxConnections,
    log,
  }).catch((error: unknown) => {
    throw asCommandError(error);
  });

  // Registered before the readiness line, so whoever reads that line finds the serve as local at once; a
  // record that could not be written is told after it, as the readiness line stays first.
  const registrationWarnings: string[] = [];
  const registration = registerForLocal(running, apiKeys.keys[0] as string, env, (warning) =>
    registrationWarnings.push(warning),
  );
  // The readiness line first and short (`petinv serve 2>&1 | head -1` is that line); details below it.
  const data = running.dataFile
    ? `${running.dataFile}${running.readOnly ? ' (loaded, never written)' : ''}`
    : 'in memory';
  const fresh = running.seeded ? ', new' : '';
  logEvent(
    'listening',
    {
      baseUrl: running.baseUrl,
      host: running.host,
      port: running.port,
      dataFile: running.dataFile ?? null,
      readOnly: running.readOnly,
      pets: running.pets,
      seeded: running.seeded,
      keySource: apiKeys.source,
      ...(apiKeys.generated ? { apiKey: apiKeys.generated } : {}),
    },
    `petinv serve: listening on ${running.baseUrl}`,
    [
      `data: ${data} (${plural(running.pets, 'pet')}${fresh})`,
      `key: ${apiKeys.source}`,
      ...(apiKeys.generated
        ? [`API key: ${apiKeys.generated} (shown once; petinv --env local uses it)`]
        : []),
    ],
  );
  if (!isLoopbackHost(running.host)) {
    const warning = `listening on ${running.host}, beyond this machine: API keys travel in clear text over http, readable by anyone on the network path`;
    logEvent('warning', { message: warning }, `petinv serve: warning: ${warning}`);
  }
  for (const warning of registrationWarnings)
    logEvent('warning', { message: warning }, `petinv serve: warning: ${warning}`);
  if (running.dataFormat === 'array' && !running.readOnly) {
    const notice = `${running.dataFile} is a plain JSON array; serve rewrites it in its own format when it first saves`;
    logEvent('notice', { message: notice }, `petinv serve: ${notice}`);
  }

  // The process's own signals in the bin, an EventEmitter in a test.
  const { signals } = context;
  const names = ['SIGINT', 'SIGTERM'] as const;
  await new Promise<void>((resolve, reject) => {
    const stop = (signal: NodeJS.Signals) => {
      for (const name of names) signals.off(name, stop);
      // A serve that is stopping is no longer one for clients to find.
      registration?.unregister();
      // A second signal of either kind while draining means "now": cut the connections; the flush still
      // completes, and a flush that fails is what the exit reports, not the cut.
      let cutBy: string | undefined;
      const cut = (again: NodeJS.Signals) => {
        for (const name of names) signals.off(name, cut);
        cutBy = again === signal ? `${signal} again` : `${again} after ${signal}`;
        running.server.closeAllConnections();
      };
      for (const name of names) signals.once(name, cut);
      const flushing = running.dataFile && !running.readOnly ? ` and flushing ${running.dataFile}` : '';
      logEvent('stopping', { signal }, `petinv serve: ${signal}, finishing requests in flight${flushing}`);
      running.close().then(
        () => {
          if (cutBy !== undefined)
            reject(
              new PetinvError('aborted', `${cutBy}: requests in flight were cut off`, { code: 'aborted' }),
            );
          // Ctrl-C is exit 130 for every command, as a shell shows it; serve still stops cleanly first.
          // The stopping line has said it all, so only --json adds its one error line.
          else if (signal === 'SIGINT')
            reject(
              new PetinvError('interrupted', '', {
                code: 'interrupted',
                message: 'stopped by SIGINT (Ctrl-C) after a clean stop',
              }),
            );
          else resolve();
        },
        (error: unknown) => reject(asCommandError(error)),
      );
    };
    for (const name of names) signals.on(name, stop);
  });
}
