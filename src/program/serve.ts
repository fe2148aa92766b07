import { Option } from '@commander-js/extra-typings';
import {
  byDefault,
  parsedOption,
  parseFailRate,
  parseLatency,
  SERVE_DEFAULTS,
  wholeNumber,
} from '../commands/options';
import type { ServeFlags } from '../commands/serve';
import { LOCAL_SERVE_HOST, LOCAL_SERVE_PORT } from '../config/paths';
import type { CommandTable, FlagsMatch, Program } from './global-options';

/** Where serve listens, what it keeps and whom it lets in. */
const declareServeData = (program: Program) =>
  program
    .command('serve')
    .description('run the inventory service (GET and PATCH /v1/inventory) for offline work and tests')
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
      "accepted key, repeatable, visible in ps (else PETINV_SERVE_API_KEY, local's key, or a new one)",
      (key: string, keys: string[] = []) => [...keys, key],
    )
    .option('--api-key-file <file>', 'accepted API keys, one per line, not in ps')
    .addOption(
      wholeNumber('--seed <count>', 'pets in a new inventory', 0, 10_000_000).default(
        ...byDefault(SERVE_DEFAULTS.seed),
      ),
    );

/** The faults serve can play, its limits, and its log. */
const declareServe = (program: Program) =>
  declareServeData(program)
    .addOption(parsedOption('--latency <ms>', 'delay responses by MS, or MIN-MAX at random', parseLatency))
    .addOption(
      parsedOption('--fail-rate <fraction>', 'answer this fraction with 503, Retry-After', parseFailRate),
    )
    .addOption(wholeNumber('--rate-limit <n>', '429 past N requests a second (Retry-After)', 1, 1_000_000))
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
    .addOption(
      wholeNumber(
        '--max-connections-per-client <n>',
        'close new connections of one client (address) at once past N of its own',
        1,
        1_000_000,
      ).default(...byDefault(SERVE_DEFAULTS.maxConnectionsPerClient)),
    )
    .option('--quiet', 'no request log lines; faults still logged');

export const SERVE_COMMANDS: CommandTable = [
  (program, context) =>
    declareServe(program).action(async (flags, command) =>
      (await import('../commands/serve')).runServe(flags, context(command)),
    ),
];

/** serve reads exactly the options declared above (see FlagsMatch). */
export const SERVE_FLAGS_MATCH: FlagsMatch<
  ServeFlags,
  ReturnType<ReturnType<typeof declareServe>['opts']>
> = true;
