import type { CommandUnknownOpts as Command, Option } from '@commander-js/extra-typings';
import type { OutputStream } from '../output/context';
import { findOption, optionsOf, shortGroup, subcommandNamed, takesValue, walkWords } from './usage';

/**
 * `petinv __complete WORD... CURRENT`, asked by the completion scripts on each TAB, answered from the
 * declarations: `:files` (the shell completes file names), or `:values` then `value<TAB>description` lines.
 */
export const COMPLETE_COMMAND = '__complete';

type Candidate = { value: string; description: string };

type Answer = Candidate[] | 'files';

const values = (names: readonly string[], description = ''): Candidate[] =>
  names.map((value) => ({ value, description }));

/** The answer with `prefix` before each candidate: what is typed before the value in the same word. */
const withPrefix = (answer: Answer, prefix: string): Answer =>
  answer === 'files'
    ? answer
    : answer.map((candidate) => ({ ...candidate, value: prefix + candidate.value }));

/** The environments a name may choose: built in, and any in the config file (a broken one adds none). */
async function environmentNames(env: NodeJS.ProcessEnv, storedOnly = false): Promise<string[]> {
  const [{ readConfigFile }, { knownEnvironments }] = await Promise.all([
    import('../config/file'),
    import('../config/settings'),
  ]);
  try {
    const file = readConfigFile(env);
    return storedOnly ? Object.keys(file.environments) : knownEnvironments(file);
  } catch {
    return storedOnly ? [] : knownEnvironments({ environments: {} });
  }
}

/** The candidates for the value of `option`, or files. `current` is what is typed of it so far. */
async function optionValues(option: Option, current: string, env: NodeJS.ProcessEnv): Promise<Answer> {
  // An option declared to take a `<file>` is the only place where the shell completes file names.
  if (option.flags.endsWith('<file>')) return 'files';
  if (option.long === '--env') return values(await environmentNames(env));
  if (option.long === '--status') {
    // A comma-separated list: complete its last item, keeping those before it.
    const { PetStatus } = await import('../contract/schemas');
    const before = current.slice(0, current.lastIndexOf(',') + 1);
    const chosen = before.split(',');
    return values(PetStatus.options.filter((status) => !chosen.includes(status)).map((s) => before + s));
  }
  return values(option.argChoices ?? []);
}

/** `petinv help NAME...`: the help topics, then the commands, down the names typed (`help env <TAB>`). */
async function helpValues(program: Command, names: readonly string[]): Promise<Candidate[]> {
  let command = program;
  for (const name of names) {
    const next = subcommandNamed(command, name);
    if (next === undefined) return [];
    command = next;
  }
  const commands = subcommands(command).filter((sub) => sub.value !== 'help');
  if (command !== program) return commands;
  const { HELP_TOPIC_NAMES } = await import('../help/topics');
  return [...commands, ...HELP_TOPIC_NAMES.map(([value, description]) => ({ value, description }))];
}

/** The candidates for the positional argument `name` of `command` (env use <env>, completion <shell>). */
async function argumentValues(command: Command, index: number, env: NodeJS.ProcessEnv): Promise<Candidate[]> {
  const argument = command.registeredArguments[index] ?? command.registeredArguments.at(-1);
  if (argument === undefined || (index >= command.registeredArguments.length && !argument.variadic))
    return [];
  const name = argument.name();
  if (name === 'env') return values(await environmentNames(env, command.name() === 'remove'));
  if (name === 'shell') return values((await import('./completion')).SHELLS);
  return [];
}

const firstLine = (text: string) => text.split('\n')[0] ?? '';

const subcommands = (command: Command): Candidate[] =>
  command.commands.map((sub) => ({
    value: sub.name(),
    description: sub.summary() || firstLine(sub.description()),
  }));

/** The options `command` offers that are not typed yet, then --help. */
function optionCandidates(command: Command, used: ReadonlySet<string>): Candidate[] {
  return [
    ...optionsOf(command)
      .filter((option) => !option.hidden && option.long !== undefined && !used.has(option.long))
      .map((option) => ({ value: option.long as string, description: firstLine(option.description) })),
    { value: '--help', description: 'display help for command' },
  ];
}

/** What completes `current`, the word under the cursor, after `before`, the words typed before it. */
async function completeWords(
  program: Command,
  before: readonly string[],
  current: string,
  env: NodeJS.ProcessEnv,
): Promise<Answer> {
  const { command, pending, positionals, used, onlyArguments } = walkWords(program, before);
  if (pending) return optionValues(pending, current, env);
  // `--env=NAME` in one word (zsh and fish keep it so; so does bash without = in COMP_WORDBREAKS).
  const joined = onlyArguments ? null : /^(-[^=]+)=(.*)$/s.exec(current);
  const joinedOption = joined ? findOption(command, joined[1] ?? '') : undefined;
  if (joined && joinedOption && takesValue(joinedOption))
    return withPrefix(await optionValues(joinedOption, joined[2] ?? '', env), `${joined[1]}=`);
  // A short option's value written on it, alone or after others: `-oj`, `-voj`, `-vo=j` (commander hands
  // -o `=j`, and its parser drops the =).
  const grouped = onlyArguments || joinedOption ? undefined : shortGroup(command, current);
  if (grouped && grouped.value !== '') {
    const value = grouped.value.replace(/^=/, '');
    return withPrefix(
      await optionValues(grouped.option, value, env),
      current.slice(0, current.length - value.length),
    );
  }
  if (command.name() === 'help' && command.parent === program && !current.startsWith('-'))
    return helpValues(program, positionals);
  if (current.startsWith('-') && !onlyArguments) return optionCandidates(command, used);
  if (positionals.length === 0 && command.commands.length > 0)
    return [...subcommands(command), ...(await argumentValues(command, 0, env))];
  return argumentValues(command, positionals.length, env);
}

export async function runComplete(
  program: Command,
  words: readonly string[],
  env: NodeJS.ProcessEnv,
  stdout: OutputStream,
) {
  const current = words.at(-1) ?? '';
  const answer = await completeWords(program, words.slice(0, -1), current, env);
  if (answer === 'files') {
    stdout.write(':files\n');
    return;
  }
  const clean = (text: string) => text.replace(/[\t\n\r]/g, ' ');
  const lines = answer
    .filter((candidate) => candidate.value.startsWith(current))
    .map((candidate) => `${clean(candidate.value)}\t${clean(candidate.description)}\n`);
  stdout.write(`:values\n${[...new Set(lines)].join('')}`);
}
