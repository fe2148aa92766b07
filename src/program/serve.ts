import { Option } from '@commander-js/extra-typings';
import {
  byDefault,
  parsedOption,
  parseFailRate,
  parseLatency,
  SERVE_DEFAULTS,
  wholeNumber,
} from '../commands/options';
import { LOCAL_SERVE_HOST, LOCAL_SERVE_PORT } from '../config/paths';
import type { CommandTable, Program } from '../program';

/** Where serve listens, what it keeps and whom it lets in. */
const declareServeData = (program: Program) =>
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
      '--recover',
      'start from everything sound before damage in the journal, moving the damaged journal aside (never removed)',
    )
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
    );

/** The faults serve can play, its limits, and its log. */
const declareServe = (program: Program) =>
  declareServeData(program)
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

export const SERVE_COMMANDS: CommandTable = [
  (program, context) =>
    declareServe(program).action(async (flags, command) =>
      (await import('../commands/serve')).runServe(flags, context(command)),
    ),
];
