import { setFlagsFromString } from 'node:v8';
import { Command, CommanderError } from 'commander';
import { version } from '../package.json';
import type { CommandContext } from './commands/context';
import type { ServeFlags } from './commands/serve';
import { LOCAL_SERVE_HOST, LOCAL_SERVE_PORT } from './config/paths';
import { ExitCode, PetinvError } from './errors';
import { wantsColor } from './output/terminal';
import { printable } from './printable';

// undici parses HTTP with its WebAssembly build of llhttp. V8 would compile it a second time with its
// optimizing tier in the background, and a short-lived CLI then waits at exit for work it never uses;
// Liftoff, V8's baseline compiler, is plenty for the requests one command makes.
setFlagsFromString('--liftoff-only');

interface GlobalFlags {
  json?: boolean;
  color: boolean;
}

function contextFrom(command: Command): CommandContext {
  runningCommand = command.name();
  const flags = command.optsWithGlobals<GlobalFlags>();
  return {
    env: process.env,
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    json: flags.json === true,
    color: wantsColor(process.env, process.stdout.isTTY === true, flags.color !== false),
    outputClosed: outputClosed.signal,
  };
}

function buildProgram(json: boolean): Command {
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
    // With --json a usage error is one JSON line on stderr (see report); commander's own text would be more.
    .showHelpAfterError(json ? false : '(run with --help for usage)')
    .configureOutput({ outputError: (text, write) => json || write(text) })
    .exitOverride();
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
function report(error: unknown, json: boolean): ExitCode {
  if (error instanceof CommanderError) {
    // commander has already printed help, the version, or its own usage message.
    if (error.exitCode === 0) return ExitCode.ok;
    if (json)
      process.stderr.write(
        `${JSON.stringify({ error: { code: 'usage', message: printable(error.message.replace(/^error: /, '')), status: 0 } })}\n`,
      );
    return ExitCode.usage;
  }
  if (error instanceof PetinvError) {
    // Outside text in a message was made printable where it was quoted; this keeps every message one line.
    process.stderr.write(
      json ? `${JSON.stringify({ error: error.body })}\n` : `petinv: ${printable(error.message, 2000)}\n`,
    );
    return error.exitCode;
  }
  const message = printable((error as Error)?.message ?? String(error), 2000);
  if (json) {
    process.stderr.write(`${JSON.stringify({ error: { code: 'internal', message, status: 0 } })}\n`);
  } else {
    process.stderr.write(`petinv: unexpected error: ${message}\n`);
    if (process.env.PETINV_DEBUG) process.stderr.write(`${(error as Error)?.stack}\n`);
    else process.stderr.write('petinv: set PETINV_DEBUG=1 for details, and please report it\n');
  }
  return ExitCode.internal;
}

/**
 * Aborted when stdout or stderr can no longer be written. A reader that goes away (`petinv list | head -1`)
 * ends petinv quietly with status 141, as a shell reports a process killed by SIGPIPE: what cat, jq and
 * gh do. Node ignores SIGPIPE, so the write fails with EPIPE instead, and is handled here for every
 * command, help and --version included. Any other write failure (a full disk) is said once, exit 1.
 */
const outputClosed = new AbortController();

/**
 * serve's stderr is its log, not its output: a reader that goes away (`petinv serve 2>&1 | head -1`) must
 * not stop the server or change how it ends. serve stops logging by itself and keeps its own exit code.
 */
const STDERR_IS_A_LOG = new Set(['serve']);
let runningCommand: string | undefined;

function watchOutput(name: 'stdout' | 'stderr', stream: NodeJS.WriteStream, other: NodeJS.WriteStream) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (name === 'stderr' && runningCommand && STDERR_IS_A_LOG.has(runningCommand)) return;
    if (outputClosed.signal.aborted) return;
    outputClosed.abort();
    if (error.code === 'EPIPE') {
      process.exitCode = ExitCode.outputClosed;
      return;
    }
    process.exitCode = ExitCode.internal;
    if (!other.destroyed) other.write(`petinv: cannot write to ${name}: ${error.code ?? error.message}\n`);
  });
}

async function main(argv: string[]): Promise<void> {
  watchOutput('stdout', process.stdout, process.stderr);
  watchOutput('stderr', process.stderr, process.stdout);
  const program = buildProgram(argv.includes('--json'));
  try {
    await program.parseAsync(argv);
  } catch (error) {
    // Once the output is closed nobody reads a message; the status was set when it closed.
    if (!outputClosed.signal.aborted) process.exitCode = report(error, argv.includes('--json'));
  }
}

await main(process.argv);
