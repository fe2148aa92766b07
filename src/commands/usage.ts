import type { CommandUnknownOpts as Command, Option } from '@commander-js/extra-typings';

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
      else if (!option && !word.startsWith('--') && word.length > 2)
        // Short options written together, as commander splits them: `-ve local` is -v -e local, and in
        // `-velocal` the e takes the rest of the word.
        for (let at = 1; at < word.length; at++) {
          const short = optionNamed(command, `-${word[at]}`);
          if (short && (short.required || short.optional)) {
            if (at === word.length - 1) index++;
            break;
          }
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
