import { describe, expect, it } from 'vitest';
import type { CommandContext } from '../../src/output/context';
import { buildProgram, COMMANDS } from '../../src/program/build';
import { GLOBAL_OPTIONS_WITH_VALUES } from '../../src/program/command-word';
import { runMain } from '../helpers/main';

/**
 * Help is checked for its structure against the declarations, not for words: every command the program
 * declares is listed under Commands, every option it declares under Options, each command's own help
 * is there and starts with its usage. A new command or option is covered without touching this file.
 */

interface DeclaredCommand {
  name(): string;
  options: readonly { long?: string; hidden?: boolean }[];
  commands: readonly DeclaredCommand[];
  createHelp(): { visibleCommands(command: never): DeclaredCommand[] };
}

const program = buildProgram(
  () => {},
  () => ({}) as CommandContext,
) as unknown as DeclaredCommand;

const visibleCommands = (command: DeclaredCommand) =>
  command
    .createHelp()
    .visibleCommands(command as never)
    .map((sub) => sub.name());

const declaredOptions = (command: DeclaredCommand) =>
  command.options.filter((option) => !option.hidden && option.long).map((option) => option.long as string);

/** A help text's sections: each heading (`Options:`) with the names its entries start with. */
function sections(help: string): Map<string, string[]> {
  const found = new Map<string, string[]>();
  let entries: string[] | undefined;
  for (const line of help.split('\n')) {
    const heading = /^([A-Z][\w ]*):$/.exec(line);
    if (heading) {
      entries = [];
      found.set(heading[1] as string, entries);
    } else if (/^ {2}\S/.test(line) && entries) entries.push(line.trim().split(/ {2,}/)[0] as string);
    else if (line === '') entries = undefined;
  }
  return found;
}

const namesIn = (entries: string[] = []) => entries.map((entry) => entry.split(' ')[0]);
const flagsIn = (entries: string[] = []) => entries.flatMap((entry) => entry.match(/--[\w-]+/g) ?? []);

async function helpOf(path: string[]) {
  const result = await runMain([...path, '--help']);
  expect(result).toMatchObject({ code: 0, stderr: '' });
  return result.stdout;
}

describe('help', () => {
  it('lists every declared command, and --version and --help; petinv help options every global option', async () => {
    const help = await helpOf([]);
    expect(help.split('\n')[0]).toMatch(/^Usage: petinv \[options\] \[command\]$/);
    const found = sections(help);
    expect(namesIn(found.get('Commands'))).toEqual(visibleCommands(program));
    expect(flagsIn(found.get('Options'))).toEqual(['--version', '--help']);
    expect(visibleCommands(program)).toEqual(expect.arrayContaining(['list', 'set', 'adjust', 'serve']));
    const options = await runMain(['help', 'options']);
    expect(options.code).toBe(0);
    const listed = options.stdout.split('\n').filter((line) => /^ {2}-/.test(line));
    expect(flagsIn(listed)).toEqual(declaredOptions(program).filter((flag) => flag !== '--version'));
  });

  const commandPaths = program.commands.flatMap((command) => [
    [command.name()],
    ...command.commands.map((sub) => [command.name(), sub.name()]),
  ]);

  it.each(commandPaths)(
    'petinv %s --help: its usage, its declared options and subcommands',
    async (...path) => {
      const command = path.reduce<DeclaredCommand>(
        (parent, name) => parent.commands.find((sub) => sub.name() === name) as DeclaredCommand,
        program,
      );
      const help = await helpOf(path);
      expect(help.split('\n')[0]).toMatch(new RegExp(`^Usage: petinv ${path.join(' ')}\\b`));
      const found = sections(help);
      // Its own options, and none of those every command takes (petinv help options lists them).
      expect(flagsIn(found.get('Options'))).toEqual([...declaredOptions(command), '--help']);
      if (command.commands.length > 0) {
        expect(namesIn(found.get('Commands'))).toEqual(visibleCommands(command));
      }
    },
  );

  it("says in set's description, before its options, that the operation is experimental", async () => {
    const help = await helpOf(['set']);
    const description = help.slice(help.indexOf('\n'), help.search(/^[A-Z][\w ]*:$/m));
    expect(description).toMatch(/experimental/);
  });
});

describe('the program built for a command line', () => {
  const namesOf = (words: string[]) =>
    (
      buildProgram(
        () => {},
        () => ({}) as CommandContext,
        words,
      ) as unknown as DeclaredCommand
    ).commands.map((command) => command.name());

  // The table's names are what picks the one command to declare: each must be the name it declares.
  it.each(Object.keys(COMMANDS).filter((name) => name !== 'help'))(
    'petinv %s ...: that command alone, the one its name in the table declares',
    (name) => {
      expect(namesOf([name, '--json'])).toEqual([name]);
    },
  );

  it('the command after the options every command takes, as commander reads them', () => {
    expect(namesOf(['--env', 'local', 'list'])).toEqual(['list']);
    expect(namesOf(['-v', '--json', '-o', 'csv', 'list'])).toEqual(['list']);
    // A value that happens to be a command's name is the option's, as commander takes it.
    expect(namesOf(['--base-url', 'list', 'get', '1'])).toEqual(['get']);
    expect(namesOf(['--env=list', 'get', '1'])).toEqual(['get']);
    // Short options written together, as commander splits them.
    expect(namesOf(['-ve', 'local', 'list'])).toEqual(['list']);
    expect(namesOf(['-ve', 'get', 'list'])).toEqual(['list']);
    expect(namesOf(['-velocal', 'list'])).toEqual(['list']);
  });

  it("every command for a help option before the command: the program's help lists them all", async () => {
    const every = program.commands.map((command) => command.name());
    for (const words of [
      ['--help', 'list'],
      ['-h', 'list'],
      ['--env', 'local', '--help', 'list'],
      ['-vh', 'list'],
    ])
      expect(namesOf(words)).toEqual(every);
    const help = await runMain(['--help', 'list']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^ {2}get <petId> /m);
  });

  it('every command for petinv help, a word that names no command, -- first, and no words', () => {
    const every = program.commands.map((command) => command.name());
    expect(every).toEqual(Object.keys(COMMANDS));
    for (const words of [['help', 'list'], ['--env', 'list'], ['lst'], ['constructor'], ['--', 'list'], []])
      expect(namesOf(words)).toEqual(every);
  });

  it("reads the options every command takes as they are declared: those taking a value, each as one word's", () => {
    const options = (
      program as unknown as {
        options: { short?: string; long?: string; required: boolean; optional: boolean }[];
      }
    ).options;
    const withValues = options
      .filter((option) => option.required || option.optional)
      .flatMap((option) => [option.short, option.long].filter((flag) => flag !== undefined));
    expect([...GLOBAL_OPTIONS_WITH_VALUES].sort()).toEqual(withValues.sort());
  });
});
