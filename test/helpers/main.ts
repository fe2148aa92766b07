import { EventEmitter } from 'node:events';
import { PassThrough, Readable } from 'node:stream';
import { main } from '../../src/cli';
import type { CliIo, OutputStream, StopSignal } from '../../src/output/context';
import { temporaryDirectory } from './serve';

export interface MainResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface MainOptions {
  /** The whole environment the command sees: nothing of the test runner's leaks in. */
  env?: NodeJS.ProcessEnv;
  /** stdin: a text, or a stream the test feeds; empty by default. */
  input?: string | Readable;
  /** Whether stdout and stderr are terminals (with `columns`), and stdin. */
  tty?: boolean;
  stdinTty?: boolean;
  columns?: number;
  /** Replaces stdout, for a test of a stream that fails. */
  stdout?: OutputStream;
}

/** A command started in-process, as the bin would start it, with captured streams and its own signals. */
export interface StartedMain {
  stdout: () => string;
  stderr: () => string;
  /** Emit 'SIGINT' or 'SIGTERM' here as the process would receive it. */
  signals: EventEmitter;
  /** Resolves with the first stderr line that contains `text`, or rejects if the command ends first. */
  stderrLine: (text: string) => Promise<string>;
  exited: Promise<number>;
}

function capture(isTTY: boolean, columns: number | undefined) {
  const stream = Object.assign(new PassThrough(), { isTTY, columns, text: '' });
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    stream.text += chunk;
  });
  return stream;
}

/** Starts `petinv ARGS` in this process through the CLI entry, `main(argv, io)`. */
export function startMain(args: readonly string[], options: MainOptions = {}): StartedMain {
  const tty = options.tty ?? false;
  const columns = tty ? (options.columns ?? 80) : undefined;
  const stdout = capture(tty, columns);
  const stderr = capture(tty, columns);
  const input = options.input ?? '';
  const stdin = Object.assign(typeof input === 'string' ? Readable.from([input]) : input, {
    isTTY: options.stdinTty ?? false,
    setRawMode: () => {},
  });
  const signals = new EventEmitter();
  const io: CliIo = {
    // The history of write runs goes to the file's own state directory (cache-home.ts), not the real one.
    env: { XDG_STATE_HOME: process.env.XDG_STATE_HOME, ...options.env },
    stdin,
    stdout: options.stdout ?? stdout,
    stderr,
    signals,
  };
  const exited = main(['node', 'petinv', ...args], io);
  return {
    stdout: () => stdout.text,
    stderr: () => stderr.text,
    signals,
    exited,
    stderrLine: (text) =>
      new Promise((resolve, reject) => {
        const look = () => {
          const line = stderr.text.split('\n').find((candidate) => candidate.includes(text));
          if (line === undefined) return false;
          stderr.off('data', look);
          resolve(line);
          return true;
        };
        if (look()) return;
        stderr.on('data', look);
        exited.then(
          (code) => reject(new Error(`petinv ${args.join(' ')} ended with ${code}:\n${stderr.text}`)),
          reject,
        );
      }),
  };
}

/** Runs `petinv ARGS` in this process to its end: its exit status and everything it printed. */
export async function runMain(args: readonly string[], options: MainOptions = {}): Promise<MainResult> {
  const started = startMain(args, options);
  const code = await started.exited;
  return { code, stdout: started.stdout(), stderr: started.stderr() };
}

export interface ServedInProcess {
  baseUrl: string;
  port: number;
  /** The readiness line, parsed. */
  ready: Record<string, unknown>;
  /** Everything serve wrote to stderr so far. */
  stderr: () => string;
  exited: Promise<number>;
  /** Sends serve a stop signal through its io, as the process would get it, and waits for its status. */
  stop: (signal?: StopSignal) => Promise<number>;
}

/** `petinv serve --json --port 0 ARGS` in-process through main, once its readiness line is out. */
export async function serveInProcess(args: string[], env: NodeJS.ProcessEnv = {}): Promise<ServedInProcess> {
  const started = startMain(['serve', '--json', '--port', '0', ...args], {
    env: { PETINV_CONFIG_DIR: temporaryDirectory('petinv-config-'), ...env },
  });
  const ready = JSON.parse(await started.stderrLine('"event":"listening"'));
  return {
    baseUrl: String(ready.baseUrl),
    port: Number(ready.port),
    ready,
    stderr: started.stderr,
    exited: started.exited,
    stop(signal = 'SIGTERM') {
      started.signals.emit(signal, signal);
      return started.exited;
    },
  };
}

/** Each pet's quantity as `petinv list --json` shows it with this environment: what a test checks a run against. */
export async function listedQuantities(env: NodeJS.ProcessEnv): Promise<Map<number, number>> {
  const list = JSON.parse((await runMain(['list', '--json'], { env })).stdout) as {
    petId: number;
    quantity: number;
  }[];
  return new Map(list.map((item) => [item.petId, item.quantity]));
}
