import type { Writable } from 'node:stream';
import { WIDE_CONTROL_CHARACTERS } from '../printable';
import type { RequestLogEntry } from '../server/app';

/** Control characters from outside (a path, a fault's message) never reach the operator's terminal raw. */
export const printable = (text: string) =>
  text.replace(/\p{Cc}/gu, (char) => `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`);

export function formatLogEntry(entry: RequestLogEntry): string {
  if ('event' in entry) {
    if (entry.event === 'client_error') return `client error ${entry.code}: answered ${entry.status}`;
    if (entry.event === 'pipeline_overflow')
      return `closed a connection with more than ${entry.limit} pipelined requests waiting for their turn; those waiting were dropped unanswered`;
    if (entry.event === 'client_connections_refused')
      return `refused ${entry.count} new connection(s) from ${printable(entry.client)}: it has ${entry.limit} open, the --max-connections-per-client limit`;
    return `refused ${entry.count} new connection(s): ${entry.limit} open, the --max-connections limit`;
  }
  const request = printable(`${entry.method} ${entry.path}`);
  if ('fault' in entry) return `${request} failed: ${printable(entry.fault)}`;
  if ('aborted' in entry) return `${request} aborted by the client after ${entry.ms}ms`;
  return `${request} ${entry.status} ${entry.ms}ms`;
}

/** Whether an entry is a request line, which --quiet silences; faults, refusals and notices always log. */
export function isRequestLine(entry: RequestLogEntry): boolean {
  if ('event' in entry) return entry.event === 'client_error';
  return !('fault' in entry);
}

/** What a JSON log line calls each entry, so that `jq 'select(.event == "request")'` finds them. */
export function eventOf(entry: RequestLogEntry): string {
  if ('event' in entry) return entry.event;
  if ('fault' in entry) return 'fault';
  if ('aborted' in entry) return 'request_aborted';
  return 'request';
}

/** Writes lines until the stream breaks (EPIPE), then nothing: a lost log is no reason to stop serving. */
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
 * One log event, its time in UTC (a log kept for days reads in order): with --json a line
 * `{"time","event",...fields}`, else the time and the text, any details on indented lines below it.
 */
export type LogEvent = (event: string, fields: object, text: string, details?: readonly string[]) => void;

/**
 * JSON.stringify leaves C1 controls (the one-byte CSI among them) and bidirectional overrides as they are;
 * a terminal showing the log would act on them. Escaped (\u009b), the JSON means the same.
 */
const escapeUnsafe = (json: string) =>
  json.replace(WIDE_CONTROL_CHARACTERS, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);

export function serveLog(stream: Writable, json: boolean): LogEvent {
  const say = lineWriter(stream);
  return (event, fields, text, details = []) => {
    const time = new Date().toISOString();
    if (json) say(escapeUnsafe(JSON.stringify({ time, event, ...fields })));
    else say([`${time} ${text}`, ...details.map((detail) => `  ${detail}`)].join('\n'));
  };
}
