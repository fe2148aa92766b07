/**
 * The command a command line names, found before commander runs (launch.ts's code cache, build.ts), read
 * as commander does: options may come first, one taking a value takes the next word (`--env local list`).
 */

import { COMPLETE_COMMAND } from '../commands/complete';
import { COMMAND_SUMMARIES } from '../help/summaries';
import { readShortGroup } from '../short-options';

export type CommandName = keyof typeof COMMAND_SUMMARIES;

export const COMMAND_NAMES: ReadonlySet<string> = new Set([
  ...Object.keys(COMMAND_SUMMARIES),
  COMPLETE_COMMAND,
]);

/** The options every command takes that take a value of their own, written as a separate word. */
export const GLOBAL_OPTIONS_WITH_VALUES: ReadonlySet<string> = new Set([
  '-e',
  '--env',
  '--base-url',
  '--timeout',
  '--retries',
  '--max-body-size',
  '--max-retry-wait',
  '-o',
  '--output',
  '--fields',
]);

/**
 * The command `words` (the arguments after `petinv`) name: the first word that is no option nor an option's
 * value, when it is a command's name; undefined for anything else (a typo, no command, `--` first).
 */
export function commandWord(words: readonly string[]): string | undefined {
  for (let index = 0; index < words.length; index++) {
    const word = words[index] as string;
    if (word === '--') return undefined;
    if (!word.startsWith('-') || word === '-') return COMMAND_NAMES.has(word) ? word : undefined;
    // A help option before the command shows the program's help, which lists every command.
    if (word === '--help') return undefined;
    if (word.startsWith('--')) {
      if (GLOBAL_OPTIONS_WITH_VALUES.has(word)) index++;
      continue;
    }
    // Short options, alone or written together: `-vh` is -v -h, and `-ve local` is -v -e local.
    const group = readShortGroup(word, (flag) => GLOBAL_OPTIONS_WITH_VALUES.has(flag));
    if (group?.flags.includes('-h')) return undefined;
    if (group?.valued?.rest === '') index++;
  }
  return undefined;
}
