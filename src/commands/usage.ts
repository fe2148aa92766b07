import type { CommandUnknownOpts as Command, Option } from '@commander-js/extra-typings';
import { readShortGroup } from '../short-options';

/**
 * Where a usage error sends its reader: `(run petinv help COMMAND)`, COMMAND being the command the words
 * chose (`env set-url`), or none for the program itself. The words are walked as commander reads them: an
 * option that takes a value takes the next word too (`--env local list` chose list), and the first word
 * that names no subcommand ends the walk.
 */
export function usageHint(program: Command, args: readonly string[]): string {
  let command = program;
  const path: string[] = [];
  for (let index = 0; index < args.length; index++) {
    const word = args[index] ?? '';
    if (word === '--') break;
    if (word.startsWith('-') && word.length > 1) {
      const option = optionNamed(command, word.split('=')[0] ?? word);
      if (option && (option.required || option.optional) && !word.includes('=')) index++;
      else if (!option && !word.startsWith('--') && word.length > 2) {
        // Short options written together: `-ve local` is -v -e local.
        const group = readShortGroup(word, (flag) => {
          const short = optionNamed(command, flag);
          return short !== undefined && (short.required || short.optional);
        });
        if (group?.valued?.rest === '') index++;
      }
      continue;
    }
    const sub = command.commands.find((candidate) =>
      [candidate.name(), ...candidate.aliases()].includes(word),
    );
    if (sub === undefined) break;
    // `petinv help NAME...`: the help of the deepest command NAME... names is where to look.
    if (command === program && sub.name() === 'help') continue;
    path.push(sub.name());
    command = sub;
  }
  return `(run ${['petinv help', ...path].join(' ')})`;
}

function optionNamed(command: Command, name: string): Option | undefined {
  for (let at: Command | null = command; at; at = at.parent) {
    const option = (at.options as Option[]).find((each) => each.long === name || each.short === name);
    if (option) return option;
  }
  return undefined;
}

/** commander's text for a usage error, as one line without its `error: ` (its "Did you mean" joined on). */
export function commanderMessage(message: string): string {
  return message
    .replace(/^error: /, '')
    .replace(/\s*\n\s*/g, ' ')
    .trim();
}
