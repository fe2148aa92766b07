import { Command, Help } from '@commander-js/extra-typings';
import { version } from '../../package.json';
import {
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_RETRY_WAIT_MS,
  DEFAULT_RETRIES,
  DEFAULT_TIMEOUT_MS,
} from '../client/defaults';
import { parseBodySize, parseRetryWait } from '../commands/limits';
import { byDefault, choiceOption, nonEmptyText, parsedOption, wholeNumber } from '../commands/options';
import { HELP_TOPIC_NAMES } from '../help/topics';
import { OUTPUT_FORMATS, parseFields } from '../output/choose';
import type { CommandContext } from '../output/context';
import type { CommandName } from './command-word';

const megabytes = DEFAULT_MAX_BODY_BYTES / 2 ** 20;

/**
 * The program, the options every command takes, and how it shows mistakes and help. An option's declaration
 * is its parser (a bad value is a usage error before anything runs), its default and its type.
 */
export const declareProgram = () =>
  new Command('petinv')
    .description('Pet store inventory from the command line, with an embedded offline inventory service.')
    .version(version, '-V, --version')
    .addOption(
      parsedOption(
        '-e, --env <name>',
        'environment for this command (production, staging, local, or one you added)',
        nonEmptyText,
      ),
    )
    .addOption(
      parsedOption(
        '--base-url <url>',
        "service base URL ending in /v1, overriding the environment's",
        nonEmptyText,
      ),
    )
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
        parseBodySize,
      ),
    )
    .addOption(
      parsedOption(
        '--max-retry-wait <s>',
        `most seconds spent waiting between the retries of one request, Retry-After included (default ${DEFAULT_MAX_RETRY_WAIT_MS / 1000}; PETINV_MAX_RETRY_WAIT)`,
        parseRetryWait,
      ),
    )
    .option('--insecure', 'allow sending the API key over plain http to a non-loopback host')
    .option('--json', 'print data, and failures, as JSON (-o json)')
    .addOption(
      choiceOption(
        '-o, --output <format>',
        `how data is printed: ${OUTPUT_FORMATS.join(', ')} (default: a table on a terminal, else tsv)`,
        OUTPUT_FORMATS,
      ),
    )
    .addOption(
      parsedOption('--fields <list>', 'the fields printed, in this order: petId,quantity', parseFields),
    )
    .option('--no-headers', 'no heading line (table, CSV, a TSV whose field order has one) nor table footer')
    .option('--no-color', 'no colour (NO_COLOR and FORCE_COLOR are honoured too)')
    .option('--no-cache', 'do not keep or reuse the last list (each read of the list is then a full GET)')
    .option(
      '-v, --verbose',
      'trace each HTTP exchange on stderr, key redacted; -vv adds bodies (PETINV_DEBUG=http, http,body)',
      (_: string | undefined, level: number) => level + 1,
      0,
    )
    // A usage error is said once, by the CLI entry (src/cli.ts), as `petinv: … (run petinv help COMMAND)`.
    .showHelpAfterError(false)
    .exitOverride()
    // Help shows a default as its declaration words it, "(default 10000)", not as commander would.
    .configureHelp({
      // The options every command takes are listed once, by `petinv help options` (kubectl's way), and
      // named in one line at the end of every help: each command's own options come first and fit a screen.
      showGlobalOptions: false,
      visibleOptions(command) {
        const options = Help.prototype.visibleOptions.call(this, command);
        // The top-level help lists only these two of its own.
        return command.parent
          ? options
          : options.filter((option) => option.long === '--version' || option.long === '--help');
      },
      optionDescription: (option) =>
        option.defaultValueDescription
          ? `${option.description} (${option.defaultValueDescription})`
          : option.description,
    })
    // `petinv help` is declared in build.ts, with the help topics beside the commands.
    .helpCommand(false)
    .addHelpText('after', helpFooter);

/** The one line every help ends with, naming the options every command takes. */
export const GLOBAL_OPTIONS_LINE = 'Global options (--env, --json, -o, -v, ...): petinv help options';

/** Where the top-level help sends a reader next. */
const helpFooter = () =>
  [
    '',
    'Help topics:',
    ...HELP_TOPIC_NAMES.map(([name, summary]) => `  petinv help ${name.padEnd(13)}${summary}`),
    '',
    'Each command: petinv help COMMAND (or petinv COMMAND --help).',
    GLOBAL_OPTIONS_LINE,
    'Read more: man petinv, and docs/ beside README.md where petinv is installed.',
    '',
  ].join('\n');

export type Program = ReturnType<typeof declareProgram>;
export type OptionsOf<C> = C extends { optsWithGlobals(): infer Flags } ? Flags : never;

/**
 * `true` when the flags a command reads (src/commands/) and commander's options for it have the same names:
 * no option is declared and never read, or read and never declared. In a `true` position, a mismatch fails
 * the typecheck; each call of a command checks the types.
 */
export type FlagsMatch<Read, Declared> = [
  Exclude<keyof Read, keyof Declared> | Exclude<keyof Declared, keyof Read>,
] extends [never]
  ? true
  : false;
/** A command as its action gets it, with the options every command shares as commander parsed them. */
export type ChosenCommand = { name(): string; optsWithGlobals(): OptionsOf<Program> };
export type ContextFor = (command: ChosenCommand) => CommandContext;
/** Each command's declaration and the module that runs it, for every command src/help/summaries.ts names. */
export type CommandTable = Readonly<Record<CommandName, (program: Program, context: ContextFor) => void>>;
