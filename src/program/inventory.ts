import type { AdjustFlags } from '../commands/adjust';
import type { GlobalFlags } from '../commands/flags';
import type { ListFlags } from '../commands/list';
import {
  byDefault,
  choiceOption,
  DEFAULT_CONCURRENCY,
  DEFAULT_PIPELINING,
  parsedOption,
  parseIntervalSeconds,
  SORT_KEYS,
  wholeNumber,
} from '../commands/options';
import type { SetFlags } from '../commands/set';
import type { SummaryFlags } from '../commands/summary';
import type { UndoFlags } from '../commands/undo';
import { SET_SHEET_HELP } from '../help/sheets';
import type { CommandTable, FlagsMatch, OptionsOf } from './global-options';

/** The inventory's own commands: reading it (list, summary) and changing it (set, adjust). */

/** How many connections a bulk run (set's, undo's) opens, and how many updates each carries at once. */
const concurrencyOption = (prefix: string) =>
  wholeNumber('--concurrency <n>', `${prefix}connections at once (default ${DEFAULT_CONCURRENCY})`, 1, 256);
const pipeliningOption = (prefix: string) =>
  wholeNumber(
    '--pipelining <n>',
    `${prefix}updates on each connection at once (default ${DEFAULT_PIPELINING}; 1: none)`,
    1,
    16,
  );

export const INVENTORY_COMMANDS = {
  list: (program, context) =>
    program
      .command('list')
      .description('list the stock of every pet: a table on a terminal, tab-separated lines in a pipe')
      .option('--table', 'a table even in a pipe (for less -R, say)')
      .option('--ndjson', 'one JSON item per line')
      .option('--csv', 'CSV with a header line')
      .option(
        '--count-sheet',
        'the sheet a stock-take fills in: petId,status,expected,counted (CSV; -o xlsx: a workbook); read back by set --file',
      )
      .option('--status <list>', 'only these statuses, comma-separated (available,pending,sold)')
      .addOption(wholeNumber('--low <n>', 'only pets with a quantity of at most N', 0))
      .addOption(
        choiceOption(
          '--sort <key>',
          `sort by ${SORT_KEYS.join(', ')} (default: the service's order)`,
          SORT_KEYS,
        ),
      )
      .option('--reverse', 'reverse the order')
      .addOption(wholeNumber('--limit <n>', 'at most N pets', 0))
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
      .option('--initial', 'with --watch in a pipe: the current state first, one line per pet')
      .action(async (_flags, command) =>
        (await import('../commands/list')).runList(command.optsWithGlobals(), context(command)),
      ),
  get: (program, context) =>
    program
      .command('get')
      .argument('<petId>', 'the pet to show')
      .description(
        'show one pet: a table row on a terminal, a tab-separated line in a pipe, the item with --json',
      )
      .action(async (petId, _flags, command) =>
        (await import('../commands/get')).runGet(petId, command.optsWithGlobals(), context(command)),
      ),
  set: (program, context) =>
    program
      .command('set')
      .argument('[petId]', 'the pet to update, or - to read bulk updates from stdin')
      .argument('[quantity]', 'the new quantity')
      .description(
        'set the quantity of one pet, or of many with --file F or -\n(the service marks this operation, PATCH /inventory/{petId}, experimental)',
      )
      .option(
        '--file <file>',
        'bulk updates: a sheet (CSV, TSV or .xlsx, read by its header), lines "petId quantity", NDJSON items, or a JSON array',
      )
      .option('--strict', 'bulk: send nothing if any line is bad')
      .option('--all', 'bulk: send also the rows already right')
      .option('--force', 'bulk: write conflicts too (a from that no longer holds)')
      .addOption(concurrencyOption('bulk: '))
      .addOption(pipeliningOption('bulk: '))
      .option('--dry-run', 'show each change against current stock; write nothing')
      .option('--ndjson', 'bulk: one JSON result per line as each completes')
      .option('-y, --yes', 'do not ask for confirmation on production')
      .addHelpText('after', SET_SHEET_HELP)
      .action(async (petId, quantity, _flags, command) =>
        (await import('../commands/set')).runSet(
          petId,
          quantity,
          command.optsWithGlobals(),
          context(command),
        ),
      ),
  adjust: (program, context) =>
    program
      .command('adjust')
      .argument('<petId>', 'the pet to adjust')
      .argument('<delta>', 'how much to add, like +5 or -2')
      .description('add to or take from a quantity: reads it, then sets the sum (checked by petinv serve)')
      .option('--dry-run', 'show the change against current stock; write nothing')
      .option('-y, --yes', 'do not ask for confirmation on production')
      .action(async (petId, delta, _flags, command) =>
        (await import('../commands/adjust')).runAdjust(
          petId,
          delta,
          command.optsWithGlobals(),
          context(command),
        ),
      ),
  history: (program, context) =>
    program
      .command('history')
      .description(
        "the recent write runs (set, adjust, bulk runs, undo) against the environment's service, newest first",
      )
      .action(async (_flags, command) =>
        (await import('../commands/history')).runHistory(command.optsWithGlobals(), context(command)),
      ),
  undo: (program, context) =>
    program
      .command('undo')
      .argument('[run]', 'the run to take back (its id from petinv history); the newest by default')
      .description(
        'write back the quantities a run replaced, for the pets that still hold what it wrote (the others are conflicts, exit 11)',
      )
      .option('--dry-run', 'show each change against current stock; write nothing')
      .option('--force', 'write back also the pets changed since the run')
      .addOption(concurrencyOption(''))
      .addOption(pipeliningOption(''))
      .option('-y, --yes', 'do not ask for confirmation on production')
      .action(async (run, _flags, command) =>
        (await import('../commands/undo')).runUndo(run, command.optsWithGlobals(), context(command)),
      ),
  summary: (program, context) =>
    program
      .command('summary')
      .description('pets and units per status, low stock and the largest stocks; a bar chart on a terminal')
      .addOption(
        wholeNumber(
          '--low <n>',
          'count the pets with a quantity of at most N, naming the lowest 10',
          0,
        ).default(...byDefault(0)),
      )
      .addOption(
        wholeNumber('--top <n>', 'how many of the largest stocks to show', 0, 1000).default(...byDefault(5)),
      )
      .action(async (_flags, command) =>
        (await import('../commands/summary')).runSummary(command.optsWithGlobals(), context(command)),
      ),
} satisfies Partial<CommandTable>;

/** Each command reads exactly the flags declared above (see FlagsMatch). */
export const INVENTORY_FLAGS_MATCH: [
  FlagsMatch<ListFlags, OptionsOf<ReturnType<(typeof INVENTORY_COMMANDS)['list']>>>,
  FlagsMatch<GlobalFlags, OptionsOf<ReturnType<(typeof INVENTORY_COMMANDS)['get']>>>,
  FlagsMatch<SetFlags, OptionsOf<ReturnType<(typeof INVENTORY_COMMANDS)['set']>>>,
  FlagsMatch<AdjustFlags, OptionsOf<ReturnType<(typeof INVENTORY_COMMANDS)['adjust']>>>,
  FlagsMatch<GlobalFlags, OptionsOf<ReturnType<(typeof INVENTORY_COMMANDS)['history']>>>,
  FlagsMatch<UndoFlags, OptionsOf<ReturnType<(typeof INVENTORY_COMMANDS)['undo']>>>,
  FlagsMatch<SummaryFlags, OptionsOf<ReturnType<(typeof INVENTORY_COMMANDS)['summary']>>>,
] = [true, true, true, true, true, true, true];
