import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { catchSubcommandTypos } from '../commands/typos';
import { examplesText } from '../help/examples';
import { COMMAND_SUMMARIES } from '../help/summaries';
import { type CommandName, commandWord } from './command-word';
import {
  type CommandTable,
  type ContextFor,
  declareProgram,
  GLOBAL_OPTIONS_LINE,
  type Program,
} from './global-options';
import { INVENTORY_COMMANDS } from './inventory';
import { SERVE_COMMANDS } from './serve';
import { SETTINGS_COMMANDS } from './settings';

export { GLOBAL_OPTIONS_LINE, type Program } from './global-options';

/**
 * The commander program: the options every command takes (global-options.ts), then each command group's
 * declarations (inventory.ts, settings.ts, serve.ts). Each command's module is imported only when that
 * command runs, and a command line that names its command first declares that command alone, so start-up
 * pays for the options every command takes and one command.
 */

/** The table of commands: each declaration, and the module that runs it, imported only when it runs. */
export const COMMANDS: CommandTable = {
  ...INVENTORY_COMMANDS,
  ...SETTINGS_COMMANDS,
  ...SERVE_COMMANDS,
  completion: (program, context) =>
    program
      .command('completion')
      .argument('<shell>', 'bash, zsh or fish')
      .description('print a shell completion script')
      .action(async (shell, _flags, command) =>
        (await import('../commands/completion')).runCompletion(shell, context(command)),
      ),
  help: (program, context) =>
    program
      .command('help')
      .argument(
        '[name...]',
        'a command (like env set-url), or a topic: options, exit-codes, environment, formats, rows, input',
      )
      .description('help for a command, or a help topic')
      .action(async (names, _flags, command) =>
        (await import('../commands/help')).runHelp(names, program, context(command)),
      ),
};

/**
 * Every command's help ends with its examples (src/help/examples.ts) and the line naming the options every
 * command takes; the top-level help lists each command by its summary (src/help/summaries.ts).
 */
function addHelpTexts(parent: { readonly commands: readonly CommandUnknownOpts[] }, path: string[] = []) {
  for (const command of parent.commands) {
    const commandPath = [...path, command.name()];
    if (path.length === 0) command.summary(COMMAND_SUMMARIES[command.name() as CommandName]);
    const examples = examplesText(commandPath.join(' '))?.trimEnd() ?? '';
    command.addHelpText('after', `${examples}\n\n${GLOBAL_OPTIONS_LINE}`);
    addHelpTexts(command, commandPath);
  }
}

/**
 * The program, its output set by `configure` before any command copies it, each command given `context`:
 * every command, or for the command line `words` (the arguments after `petinv`) the one it names first.
 */
export function buildProgram(
  configure: (program: Program) => void,
  context: ContextFor,
  words?: readonly string[],
): Program {
  const program = declareProgram();
  configure(program);
  // The one command a command line names (`petinv --env local list --json`: list), declared alone: the
  // others' declarations cost a cold `petinv list` 0.6 to 1.7 ms of CPU (Node 24, code cache kept, paired
  // medians of 80, 2026-11-28). `petinv help`, which shows them, a typo that commander suggests a command
  // for, and no command get them all.
  const named = commandWord(words ?? []);
  const only = named !== 'help' && named !== undefined && Object.hasOwn(COMMANDS, named) ? named : undefined;
  for (const [name, add] of Object.entries(COMMANDS))
    if (only === undefined || name === only) add(program, context);
  catchSubcommandTypos(program);
  addHelpTexts(program);
  return program;
}
