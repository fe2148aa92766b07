import { setFlagsFromString } from 'node:v8';
import { Command, CommanderError } from 'commander';
import { version } from '../package.json';
import type { CliIo, CommandContext, OutputStream } from './commands/context';
import type { ServeFlags } from './commands/serve';
import { LOCAL_SERVE_HOST, LOCAL_SERVE_PORT } from './config/paths';
import { ExitCode, PetinvError } from './errors';
import { wantsColor } from './output/terminal';
import { printable } from './printable';

export type { CliIo } from './commands/context';

interface GlobalFlags {
  json?: boolean;
  color: boolean;
}

/** commander's own colour rule for its help text (NO_COLOR, FORCE_COLOR, CLICOLOR_FORCE), read from io.env. */
function commanderColor(env: NodeJS.ProcessEnv, stream: OutputStream): boolean {
  if (env.NO_COLOR || env.FORCE_COLOR === '0' || env.FORCE_COLOR === 'false') return false;
  if (env.FORCE_COLOR || env.CLICOLOR_FORCE !== undefined) return true;
  return stream.isTTY === true && stream.hasColors?.() === true;
}

function buildProgram(io: CliIo, output: OutputWatch): Command {
  const contextFrom = (command: Command): CommandContext => {
    output.running = command.name();
    const flags = command.optsWithGlobals<GlobalFlags>();
    return {
      ...io,
      json: flags.json === true,
      color: wantsColor(io.env, io.stdout.isTTY === true, flags.color !== false),
      outputClosed: output.closed.signal,
    };
  };
  const program = new Command('petinv')
    .description('Pet store inventory from the command line, with an embedded offline inventory service.')
    .version(version, '-V, --version')
    .option('-e, --env <name>', 'environment for this command (production, staging, local, or one you added)')
    .option('--base-url <url>', "service base URL ending in /v1, overriding the environment's")
    .option('--timeout <ms>', 'per-attempt request timeout in milliseconds (default 10000)')
    .option('--retries <n>', 'retries after network errors, 429, 502, 503 and 504 (default 3)')
    .option(
      '--max-body-size <size>',
      'largest answer read, in bytes or with K, M, G (default 256M; PETINV_MAX_BODY_SIZE)',
    )
    .option(
      '--max-retry-wait <s>',
      'most seconds spent waiting between the retries of one request, Retry-After included (default 60; PETINV_MAX_RETRY_WAIT)',
    )
    .option('--insecure', 'allow sending the API key over plain http to a non-loopback host')
    .option('--json', 'print data, and failures, as JSON')
    .option('--no-color', 'no colour (NO_COLOR and FORCE_COLOR are honoured too)')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    // Before any subcommand is added: each copies these settings from the program.
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      // As commander's defaults do: a terminal's width, else none (it then wraps at 80), which its types omit.
      getOutHelpWidth: () => (io.stdout.isTTY ? io.stdout.columns : undefined) as number,
      getErrHelpWidth: () => (io.stderr.isTTY ? io.stderr.columns : undefined) as number,
      getOutHasColors: () => commanderColor(io.env, io.stdout),
      getErrHasColors: () => commanderColor(io.env, io.stderr),
    });
  const globals = (command: Command) => command.optsWithGlobals();

  // Each command's module is imported only when that command runs, so start-up pays for one command.
  program
    .command('list')
    .description('list the stock of every pet: a table on a terminal, tab-separated lines in a pipe')
    .option('--table', 'a table even in a pipe (for less -R, say)')
    .option('--ndjson', 'one JSON item per line')
    .option('--csv', 'CSV with a header line')
    .option('--status <list>', 'only these statuses, comma-separated (available,pending,sold)')
    .option('--low <n>', 'only pets with a quantity of at most N')
    .option('--sort <key>', "sort by petId, quantity or status (default: the service's order)")
    .option('--reverse', 'reverse the order')
    .option('--limit <n>', 'at most N pets')
    .action(async (_flags, command: Command) => {
      const { runList } = await import('./commands/list');
      await runList(globals(command), contextFrom(command));
    });

  program
    .command('set')
    .argument('[petId]', 'the pet to update, or - to read bulk updates from stdin')
    .argument('[quantity]', 'the new quantity')
    .description(
      'set the quantity of one pet, or of many with --file F or -\n(the service marks this operation, PATCH /inventory/{petId}, experimental)',
    )
    .option('--file <file>', 'bulk updates: lines "petId quantity", NDJSON items, or a JSON array')
    .option('--strict', 'bulk: send nothing if any line is bad')
    .option('--concurrency <n>', 'bulk: updates in flight at once (default 8)')
    .option('--dry-run', 'show each change against current stock; write nothing')
    .option('--ndjson', 'bulk: one JSON result per line as each completes')
    .option('-y, --yes', 'do not ask for confirmation on production')
    .addHelpText(
      'after',
      "\nExamples:\n  petinv set 42 7\n  petinv list --json | jq 'map(.quantity = 0)' | petinv set -\n  petinv set --file counts.txt --dry-run",
    )
    .action(async (petId: string | undefined, quantity: string | undefined, _flags, command: Command) => {
      const { runSet } = await import('./commands/set');
      await runSet(petId, quantity, globals(command), contextFrom(command));
    });

  program
    .command('adjust')
    .argument('<petId>', 'the pet to adjust')
    .argument('<delta>', 'how much to add, like +5 or -2')
    .description('add to or take from a quantity: reads it, then sets the sum (not atomic)')
    .option('--dry-run', 'show the change against current stock; write nothing')
    .option('-y, --yes', 'do not ask for confirmation on production')
    .action(async (petId: string, delta: string, _flags, command: Command) => {
      const { runAdjust } = await import('./commands/adjust');
      await runAdjust(petId, delta, globals(command), contextFrom(command));
    });

  const env = program
    .command('env')
    .description('list environments and mark the current one; set-url, use, remove')
    .action(async (_flags, command: Command) => {
      const { runEnvList } = await import('./commands/env');
      runEnvList(globals(command), contextFrom(command));
    });
  env
    .command('set-url')
    .argument('<env>')
    .argument('<url>', 'base URL ending in /v1')
    .description('set the base URL of an environment, adding it if new')
    .action(async (name: string, url: string, _flags, command: Command) => {
      const { runEnvSetUrl } = await import('./commands/env');
      await runEnvSetUrl(name, url, contextFrom(command));
    });
  env
    .command('use')
    .argument('<env>')
    .description('make an environment the current one')
    .action(async (name: string, _flags, command: Command) => {
      const { runEnvUse } = await import('./commands/env');
      await runEnvUse(name, contextFrom(command));
    });
  env
    .command('remove')
    .argument('<env>')
    .description('forget the URL and key stored for an environment')
    .action(async (name: string, _flags, command: Command) => {
      const { runEnvRemove } = await import('./commands/env');
      await runEnvRemove(name, contextFrom(command));
    });

  program
    .command('login')
    .description('store the API key of an environment: typed hidden on a terminal, or piped on stdin')
    .addHelpText('after', '\nExample:\n  printf %s "$KEY" | petinv login --env staging')
    .action(async (_flags, command: Command) => {
      const { runLogin } = await import('./commands/login');
      await runLogin(globals(command), contextFrom(command));
    });
  program
    .command('logout')
    .description('forget the API key of an environment')
    .action(async (_flags, command: Command) => {
      const { runLogout } = await import('./commands/login');
      await runLogout(globals(command), contextFrom(command));
    });

  const config = program
    .command('config')
    .description('show the settings in effect and where each came from (key masked)')
    .action(async (_flags, command: Command) => {
      const { runConfigShow } = await import('./commands/config');
      runConfigShow(globals(command), contextFrom(command));
    });
  config
    .command('path')
    .description("print the config file's path")
    .action(async (_flags, command: Command) => {
      const { runConfigPath } = await import('./commands/config');
      runConfigPath(contextFrom(command));
    });

  program
    .command('serve')
    .description(
      'run the inventory service locally (GET and PATCH /v1/inventory) for offline work and testing',
    )
    .option('--host <host>', 'address to bind; loopback unless told otherwise', LOCAL_SERVE_HOST)
    .option('--port <port>', 'port to listen on; 0 picks a free one', String(LOCAL_SERVE_PORT))
    .option('--data <file>', 'data file (default: inventory.json in the user data directory)')
    .option('--in-memory', 'write nothing; with --data, load that file as a fixture that stays as it is')
    .option(
      '--api-key <key>',
      "accepted API key, repeatable; visible in the process list (default: PETINV_SERVE_API_KEY, else the local environment's key, else a new one)",
      (key: string, keys: string[] = []) => [...keys, key],
    )
    .option('--api-key-file <file>', 'accepted API keys, one per line, kept out of the process list')
    .option('--seed <count>', 'pets in a new inventory (default 12)')
    .option('--latency <ms>', 'delay every response by MS or a random MIN-MAX milliseconds')
    .option('--fail-rate <fraction>', 'answer this fraction of requests with 503 and Retry-After')
    .option('--rate-limit <n>', 'answer 429 with Retry-After past N requests per second')
    .option('--headers-timeout <ms>', 'answer 408 when request headers take longer (default 10000)')
    .option(
      '--request-timeout <ms>',
      'answer 408 when a whole request takes longer to arrive (default 30000)',
    )
    .option('--max-connections <n>', 'close new connections at once past N open ones (default 1024)')
    .option('--quiet', 'no log line per request')
    .action(async (flags: ServeFlags, command: Command) => {
      const { runServe } = await import('./commands/serve');
      await runServe(flags, contextFrom(command));
    });

  program
    .command('completion')
    .argument('<shell>', 'bash, zsh or fish')
    .description('print a shell completion script')
    .addHelpText('after', '\nExample:\n  eval "$(petinv completion bash)"')
    .action(async (shell: string, _flags, command: Command) => {
      const { runCompletion } = await import('./commands/completion');
      runCompletion(shell, program, contextFrom(command));
    });

  return program;
}

/** The one place where a failure becomes a message and an exit code. */
function report(error: unknown, json: boolean, io: CliIo): ExitCode {
  const { stderr } = io;
  if (error instanceof CommanderError) {
    // commander has already printed help, the version, or its own usage message.
    if (error.exitCode === 0) return ExitCode.ok;
    if (json)
      stderr.write(
        `${JSON.stringify({ error: { code: 'usage', message: error.message.replace(/^error: /, ''), status: 0 } })}\n`,
      );
    return ExitCode.usage;
  }
  if (error instanceof PetinvError) {
    // Outside text in a message was made printable where it was quoted; this keeps every message one line.
    stderr.write(
      json ? `${JSON.stringify({ error: error.body })}\n` : `petinv: ${printable(error.message, 2000)}\n`,
    );
    return error.exitCode;
  }
  const message = printable((error as Error)?.message ?? String(error), 2000);
  if (json) {
    stderr.write(`${JSON.stringify({ error: { code: 'internal', message, status: 0 } })}\n`);
  } else {
    stderr.write(`petinv: unexpected error: ${message}\n`);
    if (io.env.PETINV_DEBUG) stderr.write(`${(error as Error)?.stack}\n`);
    else stderr.write('petinv: set PETINV_DEBUG=1 for details, and please report it\n');
  }
  return ExitCode.internal;
}

/**
 * serve's stderr is its log, not its output: a reader that goes away (`petinv serve 2>&1 | head -1`) must
 * not stop the server or change how it ends. serve stops logging by itself and keeps its own exit code.
 */
const STDERR_IS_A_LOG = new Set(['serve']);

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
  /** The command being run, once commander has chosen it. */
  running?: string;
}

function watchOutput(io: CliIo): OutputWatch {
  const output: OutputWatch = { closed: new AbortController() };
  const watch = (name: 'stdout' | 'stderr', stream: OutputStream, other: OutputStream) =>
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (name === 'stderr' && output.running && STDERR_IS_A_LOG.has(output.running)) return;
      if (output.closed.signal.aborted) return;
      output.closed.abort();
      if (error.code === 'EPIPE') {
        output.status = ExitCode.outputClosed;
        return;
      }
      output.status = ExitCode.internal;
      if (!other.destroyed) other.write(`petinv: cannot write to ${name}: ${error.code ?? error.message}\n`);
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
 * Runs one petinv command line (`argv` as process.argv has it: node, script, arguments) and returns its
 * exit status. It never exits or touches the process: the bin passes the process's own streams, env and
 * signals, and a test passes its own.
 */
export async function main(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  const output = watchOutput(io);
  let code: ExitCode = ExitCode.ok;
  try {
    await buildProgram(io, output).parseAsync([...argv]);
  } catch (error) {
    // Once the output is closed nobody reads a message; its status stands.
    if (!output.closed.signal.aborted) code = report(error, argv.includes('--json'), io);
  }
  // A write still on its way can yet fail (EPIPE when the reader has gone): the status waits for it.
  await Promise.all([flushed(io.stdout), flushed(io.stderr)]);
  return output.status ?? code;
}

/** The process's own inputs, for the bin. stdin is made only when a command reads it, as before. */
export function processIo(): CliIo {
  // undici parses HTTP with its WebAssembly build of llhttp. V8 would compile it a second time with its
  // optimizing tier in the background, and a short-lived CLI then waits at exit for work it never uses;
  // Liftoff, V8's baseline compiler, is plenty for the requests one command makes. A process-wide switch,
  // so it is thrown here, for the process, and not in main (which tests run inside vitest).
  setFlagsFromString('--liftoff-only');
  return {
    env: process.env,
    get stdin() {
      return process.stdin;
    },
    stdout: process.stdout,
    stderr: process.stderr,
    signals: process,
  };
}
