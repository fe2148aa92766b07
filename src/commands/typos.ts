import type { CommandUnknownOpts as Command } from '@commander-js/extra-typings';
import { printable } from '../printable';
import { nearestName } from '../suggest';
import { subcommandNamed } from './usage';

/**
 * commander suggests a command for a typo (`petinv lst`), but `env sett-url` is taken for an argument and
 * `help lst` shows the whole help: these give both the same "Did you mean" as the top level.
 */

/** commander's usage error for a name that is no command of `parent`, with the nearest of them (or of `alsoKnown`). */
export function unknownCommand(parent: Command, name: string, alsoKnown: readonly string[] = []): never {
  const names = [...parent.commands.map((command) => command.name()), ...alsoKnown];
  const nearest = nearestName(name, names);
  const where = parent.parent ? ` for '${parent.name()}'` : '';
  return parent.error(
    `error: unknown command '${printable(name, 60)}'${where}${nearest === undefined ? '' : ` (Did you mean ${nearest}?)`}`,
    { code: 'commander.unknownCommand' },
  );
}

/**
 * The command `names` lead to from `start` (`env set-url`), or commander's usage error for the first name
 * that leads nowhere; `alsoKnown` are offered beside `start`'s own subcommands (the help topics).
 */
export function commandAt(start: Command, names: readonly string[], alsoKnown: readonly string[] = []) {
  let command = start;
  for (const name of names)
    command =
      subcommandNamed(command, name) ?? unknownCommand(command, name, command === start ? alsoKnown : []);
  return command;
}

/** A word after `env` or `config` that names none of their subcommands is a typo, not an argument. */
export function catchSubcommandTypos(program: Command) {
  const withSubcommands = (command: Command): Command[] =>
    command.commands.flatMap((sub) =>
      sub.commands.length > 0 ? [sub, ...withSubcommands(sub)] : withSubcommands(sub),
    );
  for (const command of withSubcommands(program)) {
    if (command.registeredArguments.length > 0) continue;
    command.allowExcessArguments().hook('preAction', (hooked, acting) => {
      const [word, ...rest] = hooked.args;
      if (hooked !== acting || word === undefined) return;
      // `env help set-url`, as commander's own help command reads it under a command without an action.
      if (word === 'help') commandAt(hooked, rest).help();
      unknownCommand(hooked, word);
    });
  }
}
