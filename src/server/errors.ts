import { type ErrorCode, statusOf } from '../contract/error-codes';

export const CLOSE: Readonly<Record<string, string>> = { Connection: 'close' };

/** An answer other than success, thrown anywhere below the app and sent by its one error path. */
export class HttpError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.status = statusOf(code);
  }
}

/**
 * A start or a stop the machine refused (the data file, its journal or lock, the address): one line
 * naming the file or address and what to do; `petinv serve` prints it and exits 3.
 */
export class ServeError extends Error {
  override readonly name = 'ServeError';
}
