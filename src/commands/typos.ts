import type { CommandUnknownOpts as Command } from '@commander-js/extra-typings';
import { printable } from '../printable';
import { nearestName } from '../suggest';

/**
 * commander suggests a top-level command for a typo (`petinv lst`), but a command with both an action and
 * subcommands (`env`, `config`) takes `env sett-url` for an argument it does not expect, and the help
 * command shows the whole help for `help lst`. These give both the same "Did you mean" as the top level.
 */

/** commander's usage error for a name that is no command of `parent`, with the nearest of them (or of `alsoKnown`). */
export function unknownCommand(parent: Command, name: string, alsoKnown: readonly string[] = []): never {
  const names = [
    ...parent.commands.flatMap((command) => [command.name(), ...command.aliases()]),
    ...alsoKnown,
  ];
  const nearest = nearestName(name, names);
  const where = parent.parent ? ` for '${parent.name()}'` : '';
  return parent.error(
    `error: unknown command '${printable(name, 60)}'${where}${nearest === undefined ? '' : ` (Did you mean ${nearest}?)`}`,
    { code: 'commander.unknownCommand' },
  );
}

/** Shows the help of the command `names` lead to from `start`, or says which name leads nowhere. */
function showHelp(start: Command, names: readonly string[]): never {
  let command = start;
  for (const name of names) {
    const sub = command.commands.find((candidate) =>
      [candidate.name(), ...candidate.aliases()].includes(name),
    );
    if (sub === undefined) unknownCommand(command, name);
    command = sub;
  }
  return command.help();
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
      if (word === 'help') showHelp(hooked, rest);
      unknownCommand(hooked, word);
    });
  }
}
