import { constants } from 'node:buffer';
import type { RetryWait } from '../client/client';
import { DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_RETRY_WAIT_MS, formatBytes } from '../client/defaults';
import { configError, type PetinvError, usageError } from '../errors';
import type { CommandContext } from '../output/context';
import type { GlobalFlags } from './flags';

const SIZE = /^(\d+)\s*([kmg]?)(?:i?b)?$/i;
const UNIT_BYTES: Record<string, number> = { '': 1, k: 2 ** 10, m: 2 ** 20, g: 2 ** 30 };
/** The whole body becomes one string for the JSON parser, and V8 holds none longer than this. */
const LARGEST_BODY = constants.MAX_STRING_LENGTH;
const LONGEST_WAIT_SECONDS = 86_400;

type Fail = (message: string) => PetinvError;

/** `--max-body-size 512M`: bytes, or K, M, G (powers of 1024), an optional `iB` or `B` after them. */
export function parseByteSize(text: string): number | undefined {
  const match = SIZE.exec(text.trim());
  if (!match) return undefined;
  const bytes = Number(match[1]) * (UNIT_BYTES[(match[2] ?? '').toLowerCase()] ?? 1);
  return bytes >= 1 && bytes <= LARGEST_BODY ? bytes : undefined;
}

/** A body size from `from` (the flag, a usage error when bad, or the variable, a configuration error). */
export function parseBodySize(text: string, from: string, fail: Fail = usageError): number {
  const bytes = parseByteSize(text);
  if (bytes === undefined)
    throw fail(
      `${from} ${text}: must be a size from 1 byte to ${formatBytes(LARGEST_BODY)} (the longest text Node holds), such as 64M or 500M`,
    );
  return bytes;
}

/** Whole seconds of waiting between retries, as milliseconds. */
export function parseRetryWait(text: string, from: string, fail: Fail = usageError): number {
  const seconds = Number(text);
  if (!/^\d+$/.test(text) || seconds > LONGEST_WAIT_SECONDS)
    throw fail(`${from} ${text}: must be a whole number of seconds from 0 to ${LONGEST_WAIT_SECONDS}`);
  return seconds * 1000;
}

function fromVariable<T>(
  env: NodeJS.ProcessEnv,
  variable: string,
  parse: (...args: [string, string, Fail]) => T,
) {
  const value = env[variable];
  return value !== undefined && value !== '' ? parse(value, variable, configError) : undefined;
}

/** The bounds on what one request may cost: flag (parsed where it is declared), else variable, else default. */
export function resolveLimits(
  flags: Pick<GlobalFlags, 'maxBodySize' | 'maxRetryWait'>,
  context: CommandContext,
) {
  const { env, stderr } = context;
  const maxBodyBytes =
    flags.maxBodySize ?? fromVariable(env, 'PETINV_MAX_BODY_SIZE', parseBodySize) ?? DEFAULT_MAX_BODY_BYTES;
  const maxRetryWaitMs =
    flags.maxRetryWait ??
    fromVariable(env, 'PETINV_MAX_RETRY_WAIT', parseRetryWait) ??
    DEFAULT_MAX_RETRY_WAIT_MS;
  // A person at a terminal learns why nothing happens for a while; a script's stderr stays quiet.
  const onRetryWait = stderr.isTTY
    ? ({ operation, ms, status, retryAfter }: RetryWait) => {
        if (ms < 1000) return;
        const why = status === undefined ? 'no answer' : `${status}${retryAfter ? ', Retry-After' : ''}`;
        stderr.write(`petinv: waiting ${Math.ceil(ms / 1000)}s before retrying ${operation} (${why})\n`);
      }
    : undefined;
  return { maxBodyBytes, maxRetryWaitMs, onRetryWait };
}
