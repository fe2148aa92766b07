import { CommanderError } from '@commander-js/extra-typings';
import { COMPLETE_COMMAND, runComplete } from './commands/complete';
import { commanderMessage, usageHint } from './commands/usage';
import { stringifyJson } from './contract/json';
import { ExitCode, PetinvError } from './errors';
import { asksForJson } from './output/choose';
import type { CliIo, OutputStream } from './output/context';
import { isDumbTerminal, wantsColor } from './output/terminal';
import { printable } from './printable';
import { buildProgram, type Program } from './program/build';
import type { ContextFor } from './program/global-options';

export type { CliIo } from './output/context';

/** commander's own colour rule for its help text (NO_COLOR, FORCE_COLOR, CLICOLOR_FORCE), read from io.env, and TERM=dumb as petinv's own. */
function commanderColor(env: NodeJS.ProcessEnv, stream: OutputStream): boolean {
  if (env.NO_COLOR || env.FORCE_COLOR === '0' || env.FORCE_COLOR === 'false') return false;
  if (env.FORCE_COLOR || env.CLICOLOR_FORCE !== undefined) return true;
  return stream.isTTY === true && stream.hasColors?.() === true && !isDumbTerminal(env);
}

/** commander writes help and versions to io's streams; its usage errors are said by report, as every failure is. */
function configureOutput(program: Program, io: CliIo, json: boolean) {
  if (json) program.showHelpAfterError(false);
  program.configureOutput({
    writeOut: (text) => io.stdout.write(text),
    // With --json, commander's own text on stderr (usage errors, help) gives way to report's one JSON line.
    writeErr: (text) => json || io.stderr.write(text),
    outputError: () => {},
    // As commander's defaults do: a terminal's width, else none (it then wraps at 80), which its types omit.
    getOutHelpWidth: () => (io.stdout.isTTY ? io.stdout.columns : undefined) as number,
    getErrHelpWidth: () => (io.stderr.isTTY ? io.stderr.columns : undefined) as number,
    getOutHasColors: () => commanderColor(io.env, io.stdout),
    getErrHasColors: () => commanderColor(io.env, io.stderr),
  });
}

/** What the command commander chose receives: io, and the terminal facts decided once, here. */
function contextFor(io: CliIo, output: OutputWatch): ContextFor {
  return (command) => {
    output.running = command.name();
    const flags = command.optsWithGlobals();
    return {
      env: io.env,
      // Not copied: process.stdin's getter makes the stream (ms of a cold start); only its readers pay.
      get stdin() {
        return io.stdin;
      },
      stdout: io.stdout,
      stderr: io.stderr,
      signals: io.signals,
      quit: io.quit,
      json: flags.json === true || flags.output === 'json',
      color: wantsColor(io.env, io.stdout.isTTY === true, flags.color !== false),
      outputClosed: output.closed.signal,
      heldNotices: output.notices,
    };
  };
}

/**
 * A failure as a script reads it with --json: one line on stderr, `{"error":{"code","message","status",
 * "exitCode"}}` (status null when no service answered), and what the command adds beside `error`.
 */
function jsonError(
  body: { code: string; message: string; status: number | null },
  exitCode: ExitCode,
  beside: Readonly<Record<string, unknown>> = {},
) {
  const error = { code: body.code, message: body.message, status: body.status, exitCode };
  return `${stringifyJson({ error, ...beside })}\n`;
}

/**
 * The one place where a failure becomes a message and an exit code. `hint` sends a usage error to help.
 * `notices`, held with --json, stand beside the error on its one line.
 */
function report(error: unknown, json: boolean, io: CliIo, hint: string, notices: readonly string[]) {
  const { stderr } = io;
  if (error instanceof CommanderError) {
    // commander has already printed help or the version; its usage errors are said here.
    if (error.exitCode === 0) return ExitCode.ok;
    // Without a command, commander has shown the help (on stderr, or held back with --json).
    const message =
      error.code === 'commander.help'
        ? 'no command given (run petinv help)'
        : printable(commanderMessage(error.message), 2000);
    if (json) stderr.write(jsonError({ code: 'usage', message, status: null }, ExitCode.usage));
    else if (error.code !== 'commander.help') stderr.write(`petinv: ${message} ${hint}\n`);
    return ExitCode.usage;
  }
  if (error instanceof PetinvError) {
    // Outside text in a message was made printable where it was quoted; this keeps every message one line.
    if (json)
      stderr.write(
        jsonError(error.body, error.exitCode, {
          ...error.json,
          ...(notices.length > 0 ? { notices: notices.map((message) => ({ message })) } : {}),
        }),
      );
    // An error with no text has nothing to add (Ctrl-C at a prompt); a bulk run's Ctrl-C says what was not sent.
    else if (error.message !== '') {
      const text = printable(error.message, 2000);
      const usage = error.exitCode === ExitCode.usage && !text.includes('petinv help');
      stderr.write(`petinv: ${text}${usage ? ` ${hint}` : ''}\n`);
    }
    return error.exitCode;
  }
  const message = printable((error as Error)?.message ?? String(error), 2000);
  if (json) stderr.write(jsonError({ code: 'internal', message, status: null }, ExitCode.internal));
  else {
    stderr.write(`petinv: unexpected error: ${message}\n`);
    if (io.env.PETINV_DEBUG) stderr.write(`${(error as Error)?.stack}\n`);
    else stderr.write('petinv: set PETINV_DEBUG=1 for details, and please report it\n');
  }
  return ExitCode.internal;
}

interface OutputWatch {
  /**
   * Aborted when stdout or stderr can no longer be written. A reader that goes away (`petinv list | head -1`)
   * ends petinv quietly with status 141, as a shell reports a process killed by SIGPIPE: what cat, jq and
   * gh do. Node ignores SIGPIPE, so the write fails with EPIPE instead, and is handled here for every
   * command, help and --version included. Any other write failure (a full disk) is said once, exit 1.
   */
  closed: AbortController;
  /** The exit status the closed output decided, once it did. */
  status?: ExitCode;
  running?: string;
  /** With --json, the notices a command held for the end of its run (CommandContext.heldNotices). */
  notices: string[];
}

function watchOutput(io: CliIo): OutputWatch {
  const output: OutputWatch = { closed: new AbortController(), notices: [] };
  const watch = (name: 'stdout' | 'stderr', stream: OutputStream, other: OutputStream) =>
    stream.on('error', (error: NodeJS.ErrnoException) => {
      // serve's stderr is its log, not its output: a reader that goes away (`petinv serve 2>&1 | head -1`)
      // must not stop the server or change how it ends. serve stops logging by itself, with its own exit code.
      if (name === 'stderr' && output.running === 'serve') return;
      if (output.closed.signal.aborted) return;
      output.closed.abort();
      output.status = error.code === 'EPIPE' ? ExitCode.outputClosed : ExitCode.internal;
      if (error.code !== 'EPIPE' && !other.destroyed)
        other.write(`petinv: cannot write to ${name}: ${error.code ?? error.message}\n`);
    });
  watch('stdout', io.stdout, io.stderr);
  watch('stderr', io.stderr, io.stdout);
  return output;
}

/** Resolves once everything written so far has gone out, or failed to (the error is then reported). */
function flushed(stream: OutputStream): Promise<void> {
  if (stream.destroyed || stream.writableEnded) return Promise.resolve();
  return new Promise((resolve) => stream.write('', () => resolve()));
}

/**
 * Runs one petinv command line (`argv` as process.argv has it) and returns its exit status. It never exits
 * or touches the process: the bin passes the process's own streams, env and signals, a test its own.
 */
export async function main(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  const output = watchOutput(io);
  let code: ExitCode = ExitCode.ok;
  const json = asksForJson(argv);
  // The shell's TAB, not a person: candidates on stdout, nothing else, whatever the words hold.
  if (argv[2] === COMPLETE_COMMAND) {
    const program = buildProgram(() => {}, contextFor(io, output));
    await runComplete(program, argv.slice(3), io.env, io.stdout).catch(() => {});
    await flushed(io.stdout);
    return output.status ?? ExitCode.ok;
  }
  const program = buildProgram(
    (declared) => configureOutput(declared, io, json),
    contextFor(io, output),
    argv.slice(2),
  );
  try {
    await program.parseAsync([...argv]);
  } catch (error) {
    // Once the output is closed nobody reads a message; its status stands.
    if (!output.closed.signal.aborted)
      code = report(error, json, io, usageHint(program, argv.slice(2)), output.notices);
  }
  // A run that succeeded says its held notices after its own lines, each the JSON line it was.
  if (code === ExitCode.ok && !output.closed.signal.aborted)
    for (const message of output.notices) io.stderr.write(`${stringifyJson({ notice: { message } })}\n`);
  // A write still on its way can yet fail (EPIPE when the reader has gone): the status waits for it.
  await Promise.all([flushed(io.stdout), flushed(io.stderr)]);
  return output.status ?? code;
}

/** The process's own inputs, for the bin. stdin is made only when a command reads it, as before. */
export function processIo(): CliIo {
  return {
    env: process.env,
    get stdin() {
      return process.stdin;
    },
    stdout: process.stdout,
    stderr: process.stderr,
    signals: process,
    quit(signal) {
      process.kill(process.pid, signal);
      // Not reached when the signal ends the process, as it does with no listener left for it.
      process.exit(128 + { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 }[signal]);
    },
  };
}
