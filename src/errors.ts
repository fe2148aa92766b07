/** Every failure a user can meet is a PetinvError, carrying its exit code (each told in `petinv help exit-codes`). */
export const ExitCode = {
  ok: 0,
  internal: 1,
  usage: 2,
  config: 3,
  auth: 4,
  notFound: 5,
  rejected: 6,
  network: 7,
  server: 8,
  partial: 9,
  aborted: 10,
  conflict: 11,
  mismatch: 12,
  /** 128 + SIGINT, as a shell shows it. */
  interrupted: 130,
  /** 128 + SIGPIPE, as a shell shows it for `cat big | head -1`. */
  outputClosed: 141,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

export type ErrorKind = keyof typeof ExitCode;

export interface ServiceErrorBody {
  code: string;
  message: string;
  /** The HTTP status the service answered with; null for a failure that has none (never 0). */
  status: number | null;
}

export class PetinvError extends Error {
  override readonly name = 'PetinvError';
  readonly kind: ErrorKind;
  /** The service's Error body (or one made up for a failure that never reached the service). */
  readonly body: ServiceErrorBody;

  /** What --json says beside the error on its one line (`{"error":{...},"summary":{...}}`). */
  readonly json?: Readonly<Record<string, unknown>>;

  constructor(
    kind: ErrorKind,
    message: string,
    body?: Partial<ServiceErrorBody>,
    json?: Readonly<Record<string, unknown>>,
  ) {
    super(message);
    this.kind = kind;
    this.body = { code: body?.code ?? kind, message: body?.message ?? message, status: body?.status ?? null };
    this.json = json;
  }

  /** The same failure, with `json` beside the error on its --json line. */
  withJson(json: Readonly<Record<string, unknown>>): PetinvError {
    return new PetinvError(this.kind, this.message, this.body, { ...this.json, ...json });
  }

  get exitCode(): ExitCode {
    return ExitCode[this.kind];
  }
}

/** A write answered as done with another quantity than the one sent (exit 12), and the quantity answered. */
export class MismatchError extends PetinvError {
  constructor(
    message: string,
    /** What the service says the pet holds now: a claim, kept for the history (undo takes it back). */
    readonly answered: number,
    status: number,
  ) {
    super('mismatch', message, { code: 'mismatch', status });
  }
}

/** A write a petinv serve refused because the pet no longer held what the run read (Petinv-If-Quantity). */
export class QuantityChangedError extends PetinvError {
  constructor(
    message: string,
    /** What the pet holds, as serve said it. */
    readonly current: number,
  ) {
    super('conflict', message, { code: 'quantity_changed', status: 412 });
  }
}

export const usageError = (message: string) => new PetinvError('usage', message, { code: 'usage' });
export const configError = (message: string) => new PetinvError('config', message, { code: 'config' });
export const abortedError = (message: string) => new PetinvError('aborted', message, { code: 'aborted' });
