import { constants } from 'node:buffer';
import {
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_RETRY_WAIT_MS,
  formatBytes,
  type RetryWait,
} from '../api/client';
import { configError, usageError } from '../errors';
import type { CommandContext } from './context';

/** The bounds on what one request may cost: flag, else environment variable, else the default. */
export interface LimitFlags {
  maxBodySize?: string;
  maxRetryWait?: string;
}

export interface ClientLimits {
  maxBodyBytes: number;
  maxRetryWaitMs: number;
  onRetryWait?: (wait: RetryWait) => void;
}

const SIZE = /^(\d+)\s*([kmg]?)(?:i?b)?$/i;
const UNIT_BYTES: Record<string, number> = { '': 1, k: 2 ** 10, m: 2 ** 20, g: 2 ** 30 };
/** The whole body becomes one string for the JSON parser, and V8 holds none longer than this. */
const LARGEST_BODY = constants.MAX_STRING_LENGTH;
const LONGEST_WAIT_SECONDS = 86_400;

function pick(flag: string | undefined, name: string, variable: string, env: NodeJS.ProcessEnv) {
  if (flag !== undefined) return { text: flag, from: name, fail: usageError };
  const value = env[variable];
  if (value !== undefined && value !== '') return { text: value, from: variable, fail: configError };
  return undefined;
}

/** `--max-body-size 512M`: bytes, or K, M, G (powers of 1024), an optional `iB` or `B` after them. */
export function parseByteSize(text: string): number | undefined {
  const match = SIZE.exec(text.trim());
  if (!match) return undefined;
  const bytes = Number(match[1]) * (UNIT_BYTES[(match[2] ?? '').toLowerCase()] ?? 1);
  return bytes >= 1 && bytes <= LARGEST_BODY ? bytes : undefined;
}

export function resolveLimits(flags: LimitFlags, context: CommandContext): ClientLimits {
  let maxBodyBytes = DEFAULT_MAX_BODY_BYTES;
  const size = pick(flags.maxBodySize, '--max-body-size', 'PETINV_MAX_BODY_SIZE', context.env);
  if (size) {
    const bytes = parseByteSize(size.text);
    if (bytes === undefined)
      throw size.fail(
        `${size.from} ${size.text}: must be a size from 1 byte to ${formatBytes(LARGEST_BODY)} (the longest text Node holds), such as 64M or 500M`,
      );
    maxBodyBytes = bytes;
  }

  let maxRetryWaitMs = DEFAULT_MAX_RETRY_WAIT_MS;
  const wait = pick(flags.maxRetryWait, '--max-retry-wait', 'PETINV_MAX_RETRY_WAIT', context.env);
  if (wait) {
    const seconds = Number(wait.text);
    if (!/^\d+$/.test(wait.text) || seconds > LONGEST_WAIT_SECONDS)
      throw wait.fail(
        `${wait.from} ${wait.text}: must be a whole number of seconds from 0 to ${LONGEST_WAIT_SECONDS}`,
      );
    maxRetryWaitMs = seconds * 1000;
  }

  // A person at a terminal learns why nothing happens for a while; a script's stderr stays quiet.
  const { stderr } = context;
  const onRetryWait = stderr.isTTY
    ? ({ operation, ms, status, retryAfter }: RetryWait) => {
        if (ms < 1000) return;
        const why = status === undefined ? 'no answer' : `${status}${retryAfter ? ', Retry-After' : ''}`;
        stderr.write(`petinv: waiting ${Math.ceil(ms / 1000)}s before retrying ${operation} (${why})\n`);
      }
    : undefined;
  return { maxBodyBytes, maxRetryWaitMs, onRetryWait };
}
