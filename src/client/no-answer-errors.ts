import { PetinvError } from '../errors';
import { printableWithout } from '../printable';
import { formatBytes } from './defaults';
import type { Attempts } from './retry';
import { isSuccessStatus, TransportError } from './transport';

/** What every message of one client names: where it failed, and the limits it ran with. */
export interface ErrorContext {
  /** The environment's name, or the base URL when it has none. */
  where: string;
  /**
   * An address (`--base-url`, `PETINV_BASE_URL`), not an environment, chose the service: `where` is then
   * host:port, which is no environment's name, so no `--env`/`env set-url` of it is suggested (issue 21).
   */
  addressed?: boolean;
  /** Never shown, should the service echo it: the API key. */
  secrets: readonly string[];
  /** What to do about a refused key, which depends on where the key came from. */
  refusedKeyAdvice?: string;
  timeoutMs: number;
  maxBodyBytes: number;
}

/** The errors of a request that got no usable answer: no connection, no trust, no answer in time, or too large. */
export class NoAnswerErrors {
  constructor(protected readonly context: ErrorContext) {}

  /** The service's words as one bounded printable line, without the key. */
  shown(text: string, maxLength?: number): string {
    return printableWithout(text, this.context.secrets, maxLength);
  }

  /**
   * What the retry layer's last TransportError means to the user: for a write that may have been applied,
   * that its outcome is unknown (issue 21); else what failed, and where. Other errors are returned as they are.
   */
  afterAttempts(
    error: unknown,
    operation: string,
    url: string,
    attempts: Attempts,
    unknownOutcome: { advice(): string } | undefined,
  ): unknown {
    if (!(error instanceof TransportError)) return error;
    const { where } = this.context;
    // The same certificate will be presented again: it was not retried.
    if (error.reason === 'tls')
      return new PetinvError(
        'network',
        `cannot trust the TLS certificate of ${error.unreachable ?? new URL(url).origin} in ${where}: it presented ${this.shown(error.detail)}; certificates are always checked, against Node's authorities and those in NODE_EXTRA_CA_CERTS (a PEM file: point it at a private authority's certificate)`,
        { code: 'tls' },
      );
    // A write answered with a success whose body is too large to read may have been applied (issue 21).
    if (error.reason === 'too large')
      return this.tooLarge(
        operation,
        unknownOutcome && isSuccessStatus(error.status)
          ? { status: error.status, advice: unknownOutcome.advice() }
          : undefined,
      );
    const after = attempts.made === 1 ? '' : ` after ${attempts.made} attempts`;
    // Once a write may have been applied, "cannot reach" (or any other failure of a later attempt) would
    // say less than the truth: the outcome is unknown (issue 21).
    if (unknownOutcome && attempts.lost)
      return this.outcomeUnknown(operation, attempts.lost, after, unknownOutcome.advice());
    // The service was reached: "cannot reach" would send the user looking in the wrong place.
    if (error.reason === 'network' && error.brokeOff)
      return new PetinvError(
        'server',
        `the answer from ${where} to ${operation} broke off before it was complete (${this.shown(error.detail)})${after}`,
        { code: 'broken_response' },
      );
    // A read sent whole whose connection broke before any answer: still a network failure (exit 7).
    if (error.reason === 'network' && error.sent && !error.unreachable) {
      const failure = new PetinvError(
        'network',
        `the connection to ${where} broke after ${operation} was sent, before an answer came (${this.shown(error.detail)})${after}; the service was reached: try again, and if it goes on, check the service, or a proxy on the way`,
      );
      failure.cause = error;
      return failure;
    }
    return this.unreachable(error, url, after);
  }

  /** `applied`: a write answered with a success, whose update may have been applied, and what to do then. */
  tooLarge(operation: string, applied?: { status: number; advice: string }): PetinvError {
    const maybe = applied
      ? `; it answered ${applied.status}, so the update may have been applied; ${applied.advice}`
      : '';
    return new PetinvError(
      'server',
      `the answer from ${this.context.where} to ${operation} is larger than ${formatBytes(this.context.maxBodyBytes)}, the limit petinv reads; raise it with --max-body-size or PETINV_MAX_BODY_SIZE${maybe}`,
      { code: 'body_too_large', status: applied?.status },
    );
  }

  unreachable(error: TransportError, url: string, attempts: string): PetinvError {
    if (error.reason === 'timeout')
      return new PetinvError(
        'server',
        `no answer from ${url} within ${this.context.timeoutMs} ms in ${this.context.where}${attempts}; raise --timeout or try again later`,
        { code: 'timeout' },
      );
    const advice = error.unreachable
      ? 'is the proxy up, and the proxy variable right?'
      : 'is the service up and the base URL right? see petinv config';
    const failure = new PetinvError(
      'network',
      `cannot reach ${error.unreachable ?? url} in ${this.context.where} (${this.shown(error.detail)})${attempts}; ${advice}`,
    );
    // Whether the request was sent (src/commands/set.ts goes on to its write only when it was).
    failure.cause = error;
    return failure;
  }

  /**
   * A write sent whole with no (whole) answer: the service was reached, and may have applied it. `advice`
   * says how to settle it (for a PATCH of an absolute quantity, sending the same again is safe).
   */
  outcomeUnknown(operation: string, error: TransportError, attempts: string, advice: string): PetinvError {
    const what =
      error.reason === 'timeout'
        ? error.brokeOff
          ? `its answer did not complete within ${this.context.timeoutMs} ms`
          : `no answer came within ${this.context.timeoutMs} ms`
        : error.brokeOff
          ? `its answer broke off before it was complete (${this.shown(error.detail)})`
          : `the connection broke before an answer came (${this.shown(error.detail)})`;
    return new PetinvError(
      'server',
      `outcome unknown: ${operation} was sent to ${this.context.where} and ${what}${attempts}; the update may have been applied; ${advice}`,
      { code: 'outcome_unknown' },
    );
  }
}
