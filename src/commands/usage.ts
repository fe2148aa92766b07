import type { CommandUnknownOpts as Command, Option } from '@commander-js/extra-typings';
import { readShortGroup } from '../short-options';

/** A command line read as commander would, without running it: for the usage hint below and complete.ts. */

export const subcommandNamed = (command: Command, name: string) =>
  command.commands.find((sub) => sub.name() === name);

/** The options that apply to `command`: its own, then those of every command above it (the globals). */
export function optionsOf(command: Command): Option[] {
  const all: Option[] = [];
  for (let at: Command | null = command; at; at = at.parent) all.push(...(at.options as Option[]));
  return all;
}

/** The option `word` names (`--env`, `-e`) among those of `command` and every command above it. */
export const findOption = (command: Command, word: string) =>
  optionsOf(command).find((option) => option.long === word || option.short === word);

export const takesValue = (option: Option) => option.required || option.optional;

/** readShortGroup's valued option of `word` (`-vo`, `-vojs`, `-oj`) and its value ('': the next word). */
export function shortGroup(command: Command, word: string): { option: Option; value: string } | undefined {
  const { valued } =
    readShortGroup(word, (flag) => {
      const option = findOption(command, flag);
      return option === undefined ? undefined : takesValue(option);
    }) ?? {};
  const option = valued && findOption(command, valued.flag);
  return option ? { option, value: valued.rest } : undefined;
}

export interface WalkedWords {
  /** The command the words chose (`env set-url`); an option that takes a value took the next word too. */
  command: Command;
  /** The option the last word left waiting for its value. */
  pending?: Option;
  /** The words after the command that are neither options nor their values. */
  positionals: string[];
  /** The options given, by their long names. */
  used: Set<string>;
  /** Whether a `--` made every word after it an argument. */
  onlyArguments: boolean;
}

export function walkWords(program: Command, words: readonly string[]): WalkedWords {
  const walked: WalkedWords = { command: program, positionals: [], used: new Set(), onlyArguments: false };
  for (const word of words) {
    if (walked.pending) walked.pending = undefined;
    else if (!walked.onlyArguments && word === '--') walked.onlyArguments = true;
    else if (!walked.onlyArguments && word.startsWith('-') && word.length > 1) {
      const option = findOption(walked.command, word.split('=')[0] ?? word);
      if (option === undefined) {
        // Short options written together, as commander splits them: `-vo json` is -v -o json.
        const grouped = shortGroup(walked.command, word);
        if (grouped?.value === '') walked.pending = grouped.option;
        continue;
      }
      walked.used.add(option.long ?? option.short ?? word);
      if (takesValue(option) && !word.includes('=')) walked.pending = option;
    } else {
      const sub = walked.positionals.length === 0 ? subcommandNamed(walked.command, word) : undefined;
      if (sub) walked.command = sub;
      else walked.positionals.push(word);
    }
  }
  return walked;
}

/**
 * Where a usage error sends its reader: `(run petinv help COMMAND)`, COMMAND being the command the words
 * chose (`env set-url`), or none for the program itself; after `petinv help`, the command its names lead to.
 */
export function usageHint(program: Command, args: readonly string[]): string {
  const end = args.indexOf('--');
  const { command, positionals } = walkWords(program, end === -1 ? args : args.slice(0, end));
  const chosen =
    command.parent === program && command.name() === 'help'
      ? walkWords(program, positionals).command
      : command;
  const path: string[] = [];
  for (let at: Command | null = chosen; at?.parent; at = at.parent) path.unshift(at.name());
  return `(run ${['petinv help', ...path].join(' ')})`;
}

/** commander's text for a usage error, as one line without its `error: ` (its "Did you mean" joined on). */
export function commanderMessage(message: string): string {
  return message
    .replace(/^error: /, '')
    .replace(/\s*\n\s*/g, ' ')
    .trim();
}
