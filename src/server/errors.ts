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

/** A start or stop the machine refused (a file, its lock, the address): one line saying what to do; exit 3. */
export class ServeError extends Error {
  override readonly name = 'ServeError';
}
