import { Command, CommanderError, Option } from 'commander';
import { version } from '../package.json';
import type { CommandContext } from './commands/context';
import type { ServeFlags } from './commands/serve';
import { ExitCode, PetinvError } from './errors';
import { wantsColor } from './output/terminal';

interface GlobalFlags {
  json?: boolean;
  color: boolean;
}

function contextFrom(command: Command): CommandContext {
  const flags = command.optsWithGlobals<GlobalFlags>();
  return {
    env: process.env,
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    json: flags.json === true,
    color: wantsColor(process.env, process.stdout.isTTY === true, flags.color !== false),
  };
}

function buildProgram(): Command {
  const program = new Command('petinv')
    .description('Pet store inventory from the command line, with an embedded offline inventory service.')
    .version(version, '-V, --version')
    .option('--json', 'print data, and failures, as JSON')
    .option('--no-color', 'no colour in terminal output (NO_COLOR and FORCE_COLOR are honoured too)')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();

  // Each command's module is imported only when that command runs, so start-up pays for one command.
  program
    .command('serve')
    .description(
      'run the inventory service locally (GET and PATCH /v1/inventory) for offline work and testing',
    )
    .option('--host <host>', 'address to bind; loopback unless told otherwise', '127.0.0.1')
    .option('--port <port>', 'port to listen on; 0 picks a free one', '4010')
    .addOption(
      new Option('--data <file>', 'data file (default: inventory.json in the user data directory)').conflicts(
        'inMemory',
      ),
    )
    .option('--in-memory', 'keep the inventory in memory only; nothing is written')
    .option(
      '--api-key <key>',
      "accepted API key, repeatable (default: PETINV_SERVE_API_KEY, else the local environment's key, else a new one)",
      (key: string, keys: string[] = []) => [...keys, key],
    )
    .option('--seed <count>', 'pets in a new inventory (default 12)')
    .option('--latency <ms>', 'delay every response by MS or a random MIN-MAX milliseconds')
    .option('--fail-rate <fraction>', 'answer this fraction of requests with 503 and Retry-After')
    .option('--rate-limit <n>', 'answer 429 with Retry-After past N requests per second')
    .option('--quiet', 'no log line per request')
    .action(async (rawFlags: Record<string, unknown>, command: Command) => {
      const serve = await import('./commands/serve');
      const flags: ServeFlags = {
        ...(rawFlags as unknown as ServeFlags),
        port: parseOption(serve.parsePort, rawFlags.port, '--port') ?? 4010,
        seed: parseOption(serve.parseSeed, rawFlags.seed, '--seed'),
        latency: parseOption(serve.parseLatency, rawFlags.latency, '--latency'),
        failRate: parseOption(serve.parseFailRate, rawFlags.failRate, '--fail-rate'),
        rateLimit: parseOption(serve.parseRateLimit, rawFlags.rateLimit, '--rate-limit'),
      };
      await serve.runServe(flags, contextFrom(command));
    });

  return program;
}

function parseOption<T>(parse: (text: string) => T, value: unknown, name: string): T | undefined {
  if (value === undefined) return undefined;
  try {
    return parse(String(value));
  } catch (error) {
    throw new PetinvError('usage', `${name} ${String(value)}: ${(error as Error).message}`, {
      code: 'usage',
    });
  }
}

/** The one place where a failure becomes a message and an exit code. */
function report(error: unknown, json: boolean): ExitCode {
  if (error instanceof CommanderError) {
    // commander has already printed help, the version, or its own usage message.
    if (
      error.code === 'commander.helpDisplayed' ||
      error.code === 'commander.version' ||
      error.exitCode === 0
    )
      return ExitCode.ok;
    return ExitCode.usage;
  }
  if (error instanceof PetinvError) {
    process.stderr.write(json ? `${JSON.stringify({ error: error.body })}\n` : `petinv: ${error.message}\n`);
    return error.exitCode;
  }
  const message = (error as Error)?.message ?? String(error);
  if (json) {
    process.stderr.write(`${JSON.stringify({ error: { code: 'internal', message, status: 0 } })}\n`);
  } else {
    process.stderr.write(`petinv: unexpected error: ${message}\n`);
    if (process.env.PETINV_DEBUG) process.stderr.write(`${(error as Error)?.stack}\n`);
    else process.stderr.write('petinv: set PETINV_DEBUG=1 for details, and please report it\n');
  }
  return ExitCode.internal;
}

async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (error) {
    process.exitCode = report(error, argv.includes('--json'));
  }
}

await main(process.argv);
