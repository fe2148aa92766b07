import type { Readable, Writable } from 'node:stream';

export type InputStream = Readable & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };
/** An output stream and its terminal facts, as Node's own tty.WriteStream carries them. */
export type OutputStream = Writable & { isTTY?: boolean; columns?: number; hasColors?: () => boolean };

/**
 * The signals that stop `petinv serve` (SIGINT, SIGTERM) and make a bulk run quit (SIGHUP too: the terminal
 * closed); the process itself is one source of them, a test passes an EventEmitter.
 */
export type StopSignal = 'SIGINT' | 'SIGTERM' | 'SIGHUP';
export interface SignalSource {
  on(signal: StopSignal, listener: (signal: NodeJS.Signals) => void): unknown;
  once(signal: StopSignal, listener: (signal: NodeJS.Signals) => void): unknown;
  off(signal: StopSignal, listener: (signal: NodeJS.Signals) => void): unknown;
}

/** All the CLI takes from its process, handed to `main` by the bin or a test: nothing below reads `process.*`. */
export interface CliIo {
  env: NodeJS.ProcessEnv;
  stdin: InputStream;
  stdout: OutputStream;
  stderr: OutputStream;
  signals: SignalSource;
  /**
   * Ends the process at once as `signal` would have (the bin re-raises it); a test leaves it out. A bulk
   * run calls it at a second Ctrl-C, SIGTERM or SIGHUP, once it has recorded what it wrote.
   */
  quit?: (signal: StopSignal) => void;
}

/** The process inputs every command receives from the CLI entry, decided once there. */
export interface CommandContext extends CliIo {
  json: boolean;
  /** Whether stdout gets colour (NO_COLOR, FORCE_COLOR, --no-color and the TTY decided). */
  color: boolean;
  /** Aborted once stdout or stderr is closed (EPIPE): nobody reads any more, so long runs stop early. */
  outputClosed?: AbortSignal;
  /**
   * With --json, the notices said so far (writeNotice), held so that a failing run still prints one line:
   * they stand beside its error as `notices`; a run that succeeds prints them after its own lines.
   */
  heldNotices?: string[];
}
