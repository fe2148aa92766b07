import { TransportError, type TransportResponse } from './transport';

/**
 * The retry layer, between request.ts and the transport: it sends an attempt again after a network
 * failure, a timeout, or a 429, 502, 503 or 504, within the waiting budget, knowing nothing of answers.
 */

export interface RetryWait {
  operation: string;
  ms: number;
  /** The HTTP status that asked for the retry; undefined after a network error or a timeout. */
  status?: number;
  /** True when the service said how long to wait (Retry-After). */
  retryAfter: boolean;
}

export interface RetryPolicy {
  /** Further attempts after the first. */
  retries: number;
  /** All the waiting between the attempts of one request, Retry-After included. */
  maxRetryWaitMs: number;
  sleep: (ms: number) => Promise<void>;
  random: () => number;
  onRetryWait?: (wait: RetryWait) => void;
}

/** What the attempts of one request came to, for the messages of the layer above. */
export interface Attempts {
  made: number;
  /** The first attempt sent whole that got no whole answer (none, or one broken off): it may have applied. */
  lost?: TransportError;
  /** A wait the service asked for (Retry-After) that the budget refused. */
  refusedWaitMs?: number;
}

const RETRYABLE_STATUSES = new Set([429, 502, 503, 504]);

/** When a retry may go: Retry-After (seconds or an HTTP date), else exponential backoff with full jitter. */
export function retryDelayMs(
  attempt: number,
  retryAfter: string | null,
  random: () => number,
  now = Date.now(),
): { ms: number; retryAfter: boolean } {
  if (retryAfter !== null) {
    const trimmed = retryAfter.trim();
    // Seconds, or an HTTP date (which starts with the day's name; Date.parse alone takes "-5" as a year).
    const ms = /^\d+$/.test(trimmed)
      ? Number(trimmed) * 1000
      : /^[a-z]/i.test(trimmed)
        ? Date.parse(trimmed) - now
        : Number.NaN;
    if (Number.isFinite(ms)) return { ms: Math.max(ms, 0), retryAfter: true };
  }
  return { ms: Math.round(random() * Math.min(200 * 2 ** attempt, 5000)), retryAfter: false };
}

/**
 * Runs `attempt` until its status is not worth retrying or no attempt or budget is left, returning the last
 * answer or throwing the last TransportError; an untrusted certificate or a body too large at once.
 */
export async function retrying<R extends TransportResponse>(
  policy: RetryPolicy,
  operation: string,
  attempt: () => Promise<R>,
  attempts: Attempts,
): Promise<R> {
  let waitedMs = 0;
  const waitToRetry = async (response?: R): Promise<boolean> => {
    if (attempts.made > policy.retries) return false;
    const delay = retryDelayMs(attempts.made - 1, response?.header('retry-after') ?? null, policy.random);
    if (waitedMs + delay.ms > policy.maxRetryWaitMs) {
      if (delay.retryAfter) attempts.refusedWaitMs = delay.ms;
      return false;
    }
    waitedMs += delay.ms;
    policy.onRetryWait?.({ operation, ms: delay.ms, status: response?.status, retryAfter: delay.retryAfter });
    await policy.sleep(delay.ms);
    return true;
  };
  for (;;) {
    attempts.made++;
    let response: R;
    try {
      response = await attempt();
    } catch (error) {
      if (!(error instanceof TransportError)) throw error;
      // An answer that broke off after its status came was reached and read too: as much as one unanswered.
      if (error.sent || error.brokeOff) attempts.lost ??= error;
      if (error.reason === 'tls' || error.reason === 'too large' || !(await waitToRetry())) throw error;
      continue;
    }
    if (!RETRYABLE_STATUSES.has(response.status) || !(await waitToRetry(response))) return response;
  }
}
