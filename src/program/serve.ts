import { Option } from '@commander-js/extra-typings';
import { byDefault, parsedOption, parseFailRate, parseLatency, wholeNumber } from '../commands/options';
import type { ServeFlags } from '../commands/serve';
import { DEFAULT_SERVE_HOST, DEFAULT_SERVE_PORT } from '../contract/defaults';
import {
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_SEED_COUNT,
} from '../server/defaults';
import type { CommandTable, FlagsMatch } from './global-options';

export const SERVE_COMMANDS = {
  serve: (program, context) =>
    program
      .command('serve')
      .description('run the inventory service (GET and PATCH /v1/inventory) for offline work and tests')
      // Help has always shown these two defaults as commander shows a text default.
      .addOption(
        new Option('--host <host>', 'address to bind').default(
          ...byDefault(DEFAULT_SERVE_HOST, `default: ${JSON.stringify(DEFAULT_SERVE_HOST)}`),
        ),
      )
      .addOption(
        wholeNumber('--port <port>', 'port; 0 picks a free one', 0, 65535).default(
          ...byDefault(DEFAULT_SERVE_PORT, `default: "${DEFAULT_SERVE_PORT}"`),
        ),
      )
      .option('--data <file>', 'data file (default: in the user data dir)')
      .option('--in-memory', 'changes in memory only; --data is a fixture')
      .option(
        '--recover',
        'start from everything sound before damage in the journal, moving the damaged journal aside (never removed)',
      )
      .option(
        '--api-key <key>',
        'accepted key, repeatable; shows in ps',
        (key: string, keys: string[] = []) => [...keys, key],
      )
      .option('--api-key-file <file>', 'accepted keys, one per line')
      .addOption(
        wholeNumber('--seed <count>', 'pets in a new inventory', 0, 10_000_000).default(
          ...byDefault(DEFAULT_SEED_COUNT),
        ),
      )
      .addOption(parsedOption('--latency <ms>', 'delay answers by MS or MIN-MAX ms', parseLatency))
      .addOption(parsedOption('--fail-rate <fraction>', 'answer this fraction with 503', parseFailRate))
      .addOption(wholeNumber('--rate-limit <n>', 'answer 429 past N requests a second', 1, 1_000_000))
      .addOption(
        wholeNumber('--headers-timeout <ms>', 'headers deadline, else 408', 1, 3_600_000).default(
          ...byDefault(DEFAULT_HEADERS_TIMEOUT_MS),
        ),
      )
      .addOption(
        wholeNumber('--request-timeout <ms>', 'request deadline, else 408', 1, 3_600_000).default(
          ...byDefault(DEFAULT_REQUEST_TIMEOUT_MS),
        ),
      )
      .addOption(
        wholeNumber('--max-connections <n>', 'open connections in all', 1, 1_000_000).default(
          ...byDefault(DEFAULT_MAX_CONNECTIONS),
        ),
      )
      .addOption(
        wholeNumber('--max-connections-per-client <n>', 'open connections per client', 1, 1_000_000).default(
          ...byDefault(DEFAULT_MAX_CONNECTIONS_PER_CLIENT),
        ),
      )
      .option('--quiet', 'no request log; faults are still logged')
      .action(async (flags, command) =>
        (await import('../commands/serve')).runServe(flags, context(command)),
      ),
} satisfies Partial<CommandTable>;

/** Each command reads exactly the flags declared above (see FlagsMatch). */
export const SERVE_FLAGS_MATCH: [
  FlagsMatch<ServeFlags, ReturnType<ReturnType<(typeof SERVE_COMMANDS)['serve']>['opts']>>,
] = [true];
