/**
 * A start or a stop of the server that the machine refused: the data file, its directory, journal or
 * lock, or the address to listen on. The message is one line a person reads, naming the file or address
 * and what to do; `petinv serve` prints it and exits 3.
 */
export class ServeError extends Error {
  override readonly name = 'ServeError';
  /** The failure's kind in petinv's exit-code table: the environment (a file system, an address) refused. */
  readonly kind = 'config';
}
