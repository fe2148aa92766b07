import type { Readable, Writable } from 'node:stream';

/** The process inputs every command receives from the CLI entry, decided once there. */
export interface CommandContext {
  env: NodeJS.ProcessEnv;
  stdin: Readable & { isTTY?: boolean };
  stdout: Writable & { isTTY?: boolean };
  stderr: Writable & { isTTY?: boolean };
  /** --json: data and failures as JSON. */
  json: boolean;
  /** Whether stdout gets colour (NO_COLOR, FORCE_COLOR, --no-color and the TTY decided). */
  color: boolean;
  /** Aborted once stdout or stderr is closed (EPIPE): nobody reads any more, so long runs stop early. */
  outputClosed?: AbortSignal;
}
