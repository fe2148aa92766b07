import { defaultDataFile } from '../config/paths';
import { loopbackBaseUrl, registerServe, type ServeRegistration } from '../config/serve-records';
import { isLoopbackHost } from '../config/settings';
import { abortedError, configError, PetinvError, usageError } from '../errors';
import type { CommandContext } from '../output/context';
import { plural } from '../output/plural';
import {
  eventOf,
  formatLogEntry,
  isRequestLine,
  type LogEvent,
  printable,
  serveLog,
} from '../output/serve-log';
import type { RequestLogEntry } from '../server/app';
import { ServeError } from '../server/errors';
import { type RunningServer, startInventoryServer } from '../server/start';
import { type ResolvedKeys, resolveServeKeys, type ServeKeyFlags } from './serve-keys';

/** serve's own flags (declared for commander in src/program/serve.ts); --json, the one global it heeds, is in its context. */
export interface ServeFlags extends ServeKeyFlags {
  host: string;
  port: number;
  data?: string;
  inMemory?: boolean;
  seed: number;
  latency?: { min: number; max: number };
  failRate?: number;
  rateLimit?: number;
  headersTimeout: number;
  requestTimeout: number;
  maxConnections: number;
  maxConnectionsPerClient: number;
  quiet?: boolean;
  recover?: boolean;
}

/** A start or stop the machine refused is a config failure (exit 3) with the server's own message. */
function asCommandError(error: unknown): unknown {
  return error instanceof ServeError ? configError(error.message) : error;
}

/**
 * Leaves a record for `petinv --env local` while serve runs; not for an address beyond loopback (local's key
 * would leave the machine in clear text). A record not written is a warning, never a reason to stop.
 */
function registerForLocal(
  running: RunningServer,
  apiKey: string,
  env: NodeJS.ProcessEnv,
  warnings: string[],
): ServeRegistration | undefined {
  const baseUrl = loopbackBaseUrl(running.host, running.port, new URL(running.baseUrl).pathname);
  if (baseUrl === undefined) return undefined;
  try {
    const { dataFile = null, readOnly } = running;
    return registerServe({ baseUrl, apiKey, dataFile, readOnly }, env);
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    warnings.push(
      `petinv --env local will not find this serve: its record could not be written (${printable(code ?? message)})`,
    );
    return undefined;
  }
}

export async function runServe(flags: ServeFlags, context: CommandContext): Promise<void> {
  const { env, json } = context;
  const { data, quiet, apiKey, apiKeyFile, ...serverOptions } = flags;
  // The one check its declarations cannot make, before a key is generated or a file touched.
  const { headersTimeout, requestTimeout } = flags;
  if (headersTimeout > requestTimeout)
    throw usageError(
      `--headers-timeout ${headersTimeout} must not exceed --request-timeout ${requestTimeout}`,
    );
  // --in-memory alone keeps nothing on disk; with --data it loads that file and never writes it.
  const dataFile = data ?? (flags.inMemory ? undefined : defaultDataFile(env));
  const apiKeys = await resolveServeKeys({ apiKey, apiKeyFile }, env);
  const logEvent = serveLog(context.stderr, json);
  // --quiet silences the request log only: faults and refusals are always told.
  const log = (entry: RequestLogEntry) => {
    if (quiet && isRequestLine(entry)) return;
    logEvent(eventOf(entry), entry, formatLogEntry(entry));
  };
  const options = { ...serverOptions, dataFile, apiKeys: apiKeys.keys, log, logRequests: !quiet };
  const running = await startInventoryServer(options).catch((error) => Promise.reject(asCommandError(error)));

  // Registered before the readiness line, so whoever reads that line finds the serve as local at once; a
  // record that could not be written is told after it, as the readiness line stays first.
  const registrationWarnings: string[] = [];
  const registration = registerForLocal(running, apiKeys.keys[0] as string, env, registrationWarnings);
  announce(logEvent, running, apiKeys, registrationWarnings);
  await untilStopped(logEvent, running, registration, context.signals);
}

/** The readiness line, first and short (`petinv serve 2>&1 | head -1` is that line); details below it. */
function announce(
  logEvent: LogEvent,
  running: RunningServer,
  apiKeys: ResolvedKeys,
  registrationWarnings: readonly string[],
) {
  // A file's name may hold anything but / and NUL, escape sequences included.
  const shownFile = running.dataFile && printable(running.dataFile);
  const data = shownFile ? `${shownFile}${running.readOnly ? ' (loaded, never written)' : ''}` : 'in memory';
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
      `data: ${data} (${plural(running.pets, 'pet')}${running.seeded ? ', new' : ''})`,
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
  for (const warning of [...running.warnings.map(printable), ...registrationWarnings])
    logEvent('warning', { message: warning }, `petinv serve: warning: ${warning}`);
  for (const [event, message] of journalNotices(running, shownFile ?? ''))
    logEvent(event, { message }, `petinv serve: ${event === 'warning' ? 'warning: ' : ''}${message}`);
  if (running.dataFormat === 'array' && !running.readOnly) {
    const notice = `${shownFile} is a plain JSON array; serve rewrites it in its own format when it first saves`;
    logEvent('notice', { message: notice }, `petinv serve: ${notice}`);
  }
}

/** What the start did to the journal it found, as log events: each says where the bytes went. */
function journalNotices(running: RunningServer, shownFile: string): [string, string][] {
  const { torn, foldedLegacyEntries, recovered } = running.journal;
  const notices: [string, string][] = [];
  if (torn)
    notices.push([
      'notice',
      `the journal of ${shownFile} ended in a commit a crash cut short (${plural(torn.bytes, 'byte')}); never acknowledged, it was cut from the journal and kept ${'keptAt' in torn ? `in ${printable(torn.keptAt)}` : `here, as the disk had no room for a file of it (base64): ${torn.base64}`}`,
    ]);
  if (foldedLegacyEntries !== undefined)
    notices.push([
      'notice',
      `the journal of ${shownFile} was written by an earlier petinv, without checksums: its ${plural(foldedLegacyEntries, 'update')} were replayed as before and folded into a new snapshot, and a new journal took its place`,
    ]);
  if (recovered) {
    const where = recovered.keptAt
      ? `the damaged journal was moved, byte for byte, to ${printable(recovered.keptAt)}`
      : 'the files were left as they are (--in-memory)';
    notices.push([
      'warning',
      `--recover: the journal of ${shownFile} was damaged at byte offset ${recovered.offset} (${printable(recovered.reason)}); started from everything sound before it (${plural(recovered.commitsReplayed, 'commit')}, ${plural(recovered.updatesReplayed, 'update')} replayed). Not replayed: ${plural(recovered.commitsLost, 'complete commit')} (${plural(recovered.updatesLost, 'update')}) after the damage, and whatever the damaged bytes held; ${where}`,
    ]);
  }
  return notices;
}

/** Serves until SIGINT or SIGTERM, then finishes the requests in flight; resolves once all is written. */
function untilStopped(
  logEvent: LogEvent,
  running: RunningServer,
  registration: ServeRegistration | undefined,
  signals: CommandContext['signals'],
): Promise<void> {
  const names = ['SIGINT', 'SIGTERM'] as const;
  return new Promise<void>((resolve, reject) => {
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
      const flushing =
        running.dataFile && !running.readOnly ? ` and flushing ${printable(running.dataFile)}` : '';
      logEvent('stopping', { signal }, `petinv serve: ${signal}, finishing requests in flight${flushing}`);
      running.close().then(
        () => {
          if (cutBy !== undefined) reject(abortedError(`${cutBy}: requests in flight were cut off`));
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
