import { Command, type CommandUnknownOpts, Option } from '@commander-js/extra-typings';
import { version } from '../package.json';
import {
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_RETRY_WAIT_MS,
  DEFAULT_RETRIES,
  DEFAULT_TIMEOUT_MS,
} from './api/defaults';
import type { CommandContext } from './commands/context';
import { parseBodySize, parseRetryWait } from './commands/limits';
import {
  byDefault,
  DEFAULT_CONCURRENCY,
  parsedOption,
  parseFailRate,
  parseIntervalSeconds,
  parseLatency,
  SERVE_DEFAULTS,
  wholeNumber,
} from './commands/options';
import { catchSubcommandTypos } from './commands/typos';
import { LOCAL_SERVE_HOST, LOCAL_SERVE_PORT } from './config/paths';
import { examplesText } from './help/examples';
import { HELP_TOPICS } from './help/topics';
import { OUTPUT_FORMATS, parseFields, parseOutputFormat } from './output/choose';

/**
 * The commander program. Each option is declared once: its declaration is its type (the flags a command
 * receives are inferred from it), its parser (a bad value is a usage error before anything runs) and its
 * default (which help shows). Each command's module is imported only when that command runs, so start-up
 * pays for the declarations and one command.
 */

const megabytes = DEFAULT_MAX_BODY_BYTES / 2 ** 20;

function declareProgram() {
  return (
    new Command('petinv')
      .description('Pet store inventory from the command line, with an embedded offline inventory service.')
      .version(version, '-V, --version')
      .option(
        '-e, --env <name>',
        'environment for this command (production, staging, local, or one you added)',
      )
      .option('--base-url <url>', "service base URL ending in /v1, overriding the environment's")
      .addOption(
        wholeNumber('--timeout <ms>', 'per-attempt request timeout in milliseconds', 1, 600_000).default(
          ...byDefault(DEFAULT_TIMEOUT_MS),
        ),
      )
      .addOption(
        wholeNumber('--retries <n>', 'retries after network errors, 429, 502, 503 and 504', 0, 10).default(
          ...byDefault(DEFAULT_RETRIES),
        ),
      )
      // No commander defaults for these two: a variable may set them, and the flag wins over it (limits.ts).
      .addOption(
        parsedOption(
          '--max-body-size <size>',
          `largest answer read, in bytes or with K, M, G (default ${megabytes}M; PETINV_MAX_BODY_SIZE)`,
          (text, flag) => parseBodySize(text, flag),
        ),
      )
      .addOption(
        parsedOption(
          '--max-retry-wait <s>',
          `most seconds spent waiting between the retries of one request, Retry-After included (default ${DEFAULT_MAX_RETRY_WAIT_MS / 1000}; PETINV_MAX_RETRY_WAIT)`,
          (text, flag) => parseRetryWait(text, flag),
        ),
      )
      .option('--insecure', 'allow sending the API key over plain http to a non-loopback host')
      .option('--json', 'print data, and failures, as JSON (-o json)')
      .addOption(
        parsedOption(
          '-o, --output <format>',
          `how data is printed: ${OUTPUT_FORMATS.join(', ')} (default: a table on a terminal, else tsv)`,
          parseOutputFormat,
        ),
      )
      .addOption(
        parsedOption('--fields <list>', 'the fields printed, in this order: petId,quantity', parseFields),
      )
      .option('--no-headers', 'no heading line in a table or CSV (and no table footer)')
      .option('--no-color', 'no colour (NO_COLOR and FORCE_COLOR are honoured too)')
      .option('--no-cache', 'do not keep or reuse the last list (each read of the list is then a full GET)')
      .option(
        '-v, --verbose',
        'trace each HTTP exchange on stderr, key redacted; -vv adds bodies (PETINV_DEBUG=http, http,body)',
        (_: string | undefined, level: number) => level + 1,
        0,
      )
      .showHelpAfterError('(run with --help for usage)')
      .exitOverride()
      // Help shows a default as its declaration words it, "(default 10000)", not as commander would.
      .configureHelp({
        // Each command's help lists the options every command takes too (--env, --json, ...).
        showGlobalOptions: true,
        optionDescription: (option) =>
          option.defaultValueDescription
            ? `${option.description} (${option.defaultValueDescription})`
            : option.description,
      })
      // `petinv help` is declared below, with the help topics beside the commands.
      .helpCommand(false)
      .addHelpText('after', helpFooter)
  );
}

/** Where the top-level help sends a reader next. */
const helpFooter = () =>
  [
    '',
    'Help topics:',
    ...HELP_TOPICS.map((topic) => `  petinv help ${topic.name.padEnd(13)}${topic.summary}`),
    '',
    'Each command: petinv help COMMAND (or petinv COMMAND --help).',
    'Read more: man petinv, and README.md where petinv is installed (npm root -g).',
    '',
  ].join('\n');

export type Program = ReturnType<typeof declareProgram>;
type OptionsOf<C> = C extends { optsWithGlobals(): infer Flags } ? Flags : never;
/** The options every command shares, as commander hands them over: parsed, defaults applied. */
export type GlobalFlags = OptionsOf<Program>;

const declareList = (program: Program) =>
  program
    .command('list')
    .description('list the stock of every pet: a table on a terminal, tab-separated lines in a pipe')
    .option('--table', 'a table even in a pipe (for less -R, say)')
    .option('--ndjson', 'one JSON item per line')
    .option('--csv', 'CSV with a header line')
    .option('--status <list>', 'only these statuses, comma-separated (available,pending,sold)')
    .addOption(wholeNumber('--low <n>', 'only pets with a quantity of at most N', 0, Number.MAX_SAFE_INTEGER))
    .option('--sort <key>', "sort by petId, quantity or status (default: the service's order)")
    .option('--reverse', 'reverse the order')
    .addOption(wholeNumber('--limit <n>', 'at most N pets', 0, Number.MAX_SAFE_INTEGER))
    .option(
      '--watch',
      'poll and show changes: a table redrawn in place, or one JSON line per change in a pipe',
    )
    .addOption(
      parsedOption(
        '--interval <seconds>',
        'with --watch: seconds between polls (default 2)',
        parseIntervalSeconds,
      ),
    )
    .option('--initial', 'with --watch in a pipe: the current state first, one line per pet');
export type ListFlags = OptionsOf<ReturnType<typeof declareList>>;

const declareSet = (program: Program) =>
  program
    .command('set')
    .argument('[petId]', 'the pet to update, or - to read bulk updates from stdin')
    .argument('[quantity]', 'the new quantity')
    .description(
      'set the quantity of one pet, or of many with --file F or -\n(the service marks this operation, PATCH /inventory/{petId}, experimental)',
    )
    .option('--file <file>', 'bulk updates: lines "petId quantity", NDJSON items, or a JSON array')
    .option('--strict', 'bulk: send nothing if any line is bad')
    .addOption(
      wholeNumber(
        '--concurrency <n>',
        `bulk: updates in flight at once (default ${DEFAULT_CONCURRENCY})`,
        1,
        256,
      ),
    )
    .option('--dry-run', 'show each change against current stock; write nothing')
    .option('--ndjson', 'bulk: one JSON result per line as each completes')
    .option('-y, --yes', 'do not ask for confirmation on production');
export type SetFlags = OptionsOf<ReturnType<typeof declareSet>>;

const declareAdjust = (program: Program) =>
  program
    .command('adjust')
    .argument('<petId>', 'the pet to adjust')
    .argument('<delta>', 'how much to add, like +5 or -2')
    .description('add to or take from a quantity: reads it, then sets the sum (not atomic)')
    .option('--dry-run', 'show the change against current stock; write nothing')
    .option('-y, --yes', 'do not ask for confirmation on production');
export type AdjustFlags = OptionsOf<ReturnType<typeof declareAdjust>>;

const declareLogin = (program: Program) =>
  program
    .command('login')
    .description('store the API key of an environment: typed hidden on a terminal, or piped on stdin')
    .option('--create', 'store the key even if the environment has no URL yet (a script is not asked)')
    .option('--no-verify', 'store the key without asking the service whether it accepts it');
export type LoginFlags = OptionsOf<ReturnType<typeof declareLogin>>;

const declareSummary = (program: Program) =>
  program
    .command('summary')
    .description('pets and units per status, low stock and the largest stocks; a bar chart on a terminal')
    .addOption(
      wholeNumber(
        '--low <n>',
        'count the pets with a quantity of at most N',
        0,
        Number.MAX_SAFE_INTEGER,
      ).default(...byDefault(0)),
    )
    .addOption(
      wholeNumber('--top <n>', 'how many of the largest stocks to show', 0, 1000).default(...byDefault(5)),
    );
export type SummaryFlags = OptionsOf<ReturnType<typeof declareSummary>>;

const declareServe = (program: Program) =>
  program
    .command('serve')
    .description(
      'run the inventory service locally (GET and PATCH /v1/inventory) for offline work and testing',
    )
    // Help has always shown these two defaults as commander shows a text default.
    .addOption(
      new Option('--host <host>', 'address to bind; loopback unless told otherwise').default(
        ...byDefault(LOCAL_SERVE_HOST, `default: ${JSON.stringify(LOCAL_SERVE_HOST)}`),
      ),
    )
    .addOption(
      wholeNumber('--port <port>', 'port to listen on; 0 picks a free one', 0, 65535).default(
        ...byDefault(LOCAL_SERVE_PORT, `default: "${LOCAL_SERVE_PORT}"`),
      ),
    )
    .option('--data <file>', 'data file (default: inventory.json in the user data directory)')
    .option('--in-memory', 'write nothing; with --data, load that file as a fixture that stays as it is')
    .option(
      '--api-key <key>',
      "accepted API key, repeatable; visible in the process list (default: PETINV_SERVE_API_KEY, else the local environment's key, else a new one)",
      (key: string, keys: string[] = []) => [...keys, key],
    )
    .option('--api-key-file <file>', 'accepted API keys, one per line, kept out of the process list')
    .addOption(
      wholeNumber('--seed <count>', 'pets in a new inventory', 0, 10_000_000).default(
        ...byDefault(SERVE_DEFAULTS.seed),
      ),
    )
    .addOption(
      parsedOption(
        '--latency <ms>',
        'delay every response by MS or a random MIN-MAX milliseconds',
        parseLatency,
      ),
    )
    .addOption(
      parsedOption(
        '--fail-rate <fraction>',
        'answer this fraction of requests with 503 and Retry-After',
        parseFailRate,
      ),
    )
    .addOption(
      wholeNumber('--rate-limit <n>', 'answer 429 with Retry-After past N requests per second', 1, 1_000_000),
    )
    .addOption(
      wholeNumber(
        '--headers-timeout <ms>',
        'answer 408 when request headers take longer',
        1,
        3_600_000,
      ).default(...byDefault(SERVE_DEFAULTS.headersTimeout)),
    )
    .addOption(
      wholeNumber(
        '--request-timeout <ms>',
        'answer 408 when a whole request takes longer to arrive',
        1,
        3_600_000,
      ).default(...byDefault(SERVE_DEFAULTS.requestTimeout)),
    )
    .addOption(
      wholeNumber(
        '--max-connections <n>',
        'close new connections at once past N open ones',
        1,
        1_000_000,
      ).default(...byDefault(SERVE_DEFAULTS.maxConnections)),
    )
    .option('--quiet', 'no log line per request');
/** serve's own options only: --json is the one global it heeds, through its context. */
export type ServeFlags = ReturnType<ReturnType<typeof declareServe>['opts']>;

type ChosenCommand = { name(): string; optsWithGlobals(): GlobalFlags };
type ContextFor = (command: ChosenCommand) => CommandContext;
const globals = (command: ChosenCommand) => command.optsWithGlobals();

/** The table of commands: each declaration, and the module that runs it, imported only when it runs. */
const COMMANDS: ReadonlyArray<(program: Program, context: ContextFor) => void> = [
  (program, context) =>
    declareList(program).action(async (_flags, command) =>
      (await import('./commands/list')).runList(command.optsWithGlobals(), context(command)),
    ),
  (program, context) =>
    declareSet(program).action(async (petId, quantity, _flags, command) =>
      (await import('./commands/set')).runSet(petId, quantity, command.optsWithGlobals(), context(command)),
    ),
  (program, context) =>
    declareAdjust(program).action(async (petId, delta, _flags, command) =>
      (await import('./commands/adjust')).runAdjust(
        petId,
        delta,
        command.optsWithGlobals(),
        context(command),
      ),
    ),
  (program, context) =>
    declareSummary(program).action(async (_flags, command) =>
      (await import('./commands/summary')).runSummary(command.optsWithGlobals(), context(command)),
    ),
  (program, context) => {
    const env = program
      .command('env')
      .description('list environments and mark the current one; set-url, use, remove')
      .action(async (_flags, command) =>
        (await import('./commands/env')).runEnvList(globals(command), context(command)),
      );
    env
      .command('set-url')
      .argument('<env>')
      .argument('<url>', 'base URL ending in /v1')
      .description('set the base URL of an environment, adding it if new')
      .action(async (name, url, _flags, command) =>
        (await import('./commands/env')).runEnvSetUrl(name, url, context(command)),
      );
    env
      .command('use')
      .argument('<env>')
      .description('make an environment the current one')
      .action(async (name, _flags, command) =>
        (await import('./commands/env')).runEnvUse(name, context(command)),
      );
    env
      .command('remove')
      .argument('<env>')
      .description('forget the URL and key stored for an environment')
      .action(async (name, _flags, command) =>
        (await import('./commands/env')).runEnvRemove(name, context(command)),
      );
  },
  (program, context) =>
    declareLogin(program).action(async (_flags, command) =>
      (await import('./commands/login')).runLogin(command.optsWithGlobals(), context(command)),
    ),
  (program, context) =>
    program
      .command('logout')
      .description('forget the API key of an environment')
      .action(async (_flags, command) =>
        (await import('./commands/login')).runLogout(globals(command), context(command)),
      ),
  (program, context) =>
    program
      .command('config')
      .description('show the settings in effect and where each came from (key masked)')
      .action(async (_flags, command) =>
        (await import('./commands/config')).runConfigShow(globals(command), context(command)),
      )
      .command('path')
      .description("print the config file's path")
      .action(async (_flags, command) => (await import('./commands/config')).runConfigPath(context(command))),
  (program, context) =>
    program
      .command('status')
      .description(
        'the environment in use, its URL and key and where each came from, and whether the service answers with that key',
      )
      .addHelpText('after', '\nExamples:\n  petinv status\n  petinv --env local status --json')
      .action(async (_flags, command) =>
        (await import('./commands/status')).runStatus(globals(command), context(command)),
      ),
  (program, context) =>
    declareServe(program).action(async (flags, command) =>
      (await import('./commands/serve')).runServe(flags, context(command)),
    ),
  (program, context) =>
    program
      .command('completion')
      .argument('<shell>', 'bash, zsh or fish')
      .description('print a shell completion script')
      .action(async (shell, _flags, command) =>
        (await import('./commands/completion')).runCompletion(shell, context(command)),
      ),
  (program, context) =>
    program
      .command('help')
      .argument('[name...]', 'a command (like env set-url), or a topic: exit-codes, environment, formats')
      .description('help for a command, or a help topic')
      .action(async (names, _flags, command) =>
        (await import('./commands/help')).runHelp(names, program, context(command)),
      ),
];

/** Every command's help ends with its examples (src/help/examples.ts). */
function addExamples(parent: { readonly commands: readonly CommandUnknownOpts[] }, path: string[] = []) {
  for (const command of parent.commands) {
    const commandPath = [...path, command.name()];
    const examples = examplesText(commandPath.join(' '));
    if (examples) command.addHelpText('after', examples);
    addExamples(command, commandPath);
  }
}

/** The program, its output set by `configure` before any command copies it, each command given `context`. */
export function buildProgram(configure: (program: Program) => void, context: ContextFor): Program {
  const program = declareProgram();
  configure(program);
  for (const add of COMMANDS) add(program, context);
  catchSubcommandTypos(program);
  addExamples(program);
  return program;
}
