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

/** Each help ends with the command's examples and the line naming the options every command takes. */
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
  // The command named is declared alone: the others cost a cold `petinv list` up to 1.7 ms (Node 24).
  // `petinv help`, which shows them, a typo commander suggests a command for, and no command get them all.
  const named = commandWord(words ?? []);
  const only = named !== 'help' && named !== undefined && Object.hasOwn(COMMANDS, named) ? named : undefined;
  for (const [name, add] of Object.entries(COMMANDS))
    if (only === undefined || name === only) add(program, context);
  catchSubcommandTypos(program);
  addHelpTexts(program);
  return program;
}
