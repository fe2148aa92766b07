import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { describe, expect, it } from 'vitest';
import { version } from '../../package.json';
import { ExitCode } from '../../src/errors';
import { COMMAND_EXAMPLES } from '../../src/help/examples';
import { HELP_TOPIC_NAMES, HELP_TOPICS } from '../../src/help/topics';
import { buildProgram, GLOBAL_OPTIONS_LINE } from '../../src/program/build';
import { GENERATED_PAGES, GENERATED_SECTIONS, renderManPage, syncDocument } from '../../src/program/manual';
import { runMain } from '../helpers/main';

const root = join(import.meta.dirname, '../..');

/** Every command path of the program, "env set-url" included. */
function commandPaths(parent: { readonly commands: readonly CommandUnknownOpts[] }, path: string[] = []) {
  return parent.commands.flatMap((command): string[][] => [
    [...path, command.name()],
    ...commandPaths(command, [...path, command.name()]),
  ]);
}
const program = buildProgram(
  () => {},
  () => {
    throw new Error('no command runs here');
  },
);
const paths = commandPaths(program);

describe('help', () => {
  it('knows every command', () => {
    expect(paths.map((path) => path.join(' '))).toEqual(
      expect.arrayContaining(['list', 'set', 'adjust', 'env set-url', 'config path', 'serve', 'help']),
    );
  });

  it.each(paths.map((path) => [path.join(' ')]))(
    '%s --help: its own options, its examples, then one line naming the global options',
    async (path) => {
      expect(
        COMMAND_EXAMPLES[path]?.length,
        `no examples for ${path} in src/help/examples.ts`,
      ).toBeGreaterThan(0);
      const help = await runMain([...path.split(' '), '--help']);
      expect(help.code).toBe(0);
      expect(help.stdout).not.toMatch(/Global Options:|--base-url/);
      expect(help.stdout).toMatch(/\nExamples:\n {2}petinv|\nExamples:\n {2}printf|\nExamples:\n {2}eval/);
      expect(help.stdout.trimEnd().split('\n').at(-1)).toBe(GLOBAL_OPTIONS_LINE);
      expect(help.stdout.indexOf('Examples:')).toBeGreaterThan(help.stdout.indexOf('Options:'));
      // One list of examples, the one src/help/examples.ts keeps for the command.
      expect(help.stdout.split('\nExamples:\n')).toHaveLength(2);
      // `petinv help PATH` is the same text.
      expect((await runMain(['help', ...path.split(' ')])).stdout).toBe(help.stdout);
    },
  );

  /** The lines a help text takes on a terminal `columns` wide: a line wider than that wraps onto more. */
  const screenLines = (text: string, columns: number) =>
    text
      .replace(/\n$/, '')
      .split('\n')
      .reduce((lines, line) => lines + Math.max(1, Math.ceil(line.length / columns)), 0);

  const limits: Array<[string, number]> = [
    ['--help', 45],
    ...paths.map((path): [string, number] => [path.join(' '), 40]),
  ];
  it.each(limits)(
    'petinv %s --help fits %i lines of an 80-column terminal, and in a pipe',
    async (path, most) => {
      const args = path === '--help' ? ['--help'] : [...path.split(' '), '--help'];
      for (const options of [{ tty: true, columns: 80 }, { tty: false }]) {
        const help = await runMain(args, options);
        expect(help.code).toBe(0);
        expect(screenLines(help.stdout, 80), help.stdout).toBeLessThanOrEqual(most);
        for (const line of help.stdout.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
      }
    },
  );

  it('the top-level help lists each command on one line, then the topics and where to read more', async () => {
    const help = await runMain(['--help'], { tty: true, columns: 80 });
    const listed = help.stdout.slice(
      help.stdout.indexOf('Commands:\n'),
      help.stdout.indexOf('\n\n', help.stdout.indexOf('Commands:')),
    );
    expect(listed.split('\n').slice(1)).toHaveLength(program.commands.length);
    for (const [name] of HELP_TOPIC_NAMES) expect(help.stdout).toContain(`petinv help ${name}`);
    expect(help.stdout).toContain(`\n${GLOBAL_OPTIONS_LINE}\n`);
    expect(help.stdout.trimEnd().split('\n').at(-1)).toMatch(/^Read more: man petinv, and docs\//);
    expect((await runMain(['help'], { tty: true, columns: 80 })).stdout).toBe(help.stdout);
    // help's own help names every topic too, options included.
    const helpHelp = (await runMain(['help', 'help'])).stdout;
    const topics = helpHelp
      .slice(helpHelp.indexOf('a topic:'), helpHelp.indexOf('\nOptions:'))
      .split(/[\s,]+/);
    for (const [name] of HELP_TOPIC_NAMES) expect(topics).toContain(name);
  });

  it('petinv help options lists every option every command takes, once', async () => {
    const result = await runMain(['help', 'options'], { tty: true, columns: 80 });
    expect(result.code).toBe(0);
    const globals = program.options.filter((option) => !option.hidden && option.long !== '--version');
    expect(globals.length).toBeGreaterThan(10);
    for (const option of globals) {
      const term = option.short ? `${option.short}, ${option.long}` : (option.long as string);
      expect(
        result.stdout.match(new RegExp(`^ {2}${term.replace(/[-]/g, '\\-')}\\b`, 'gm')),
        term,
      ).toHaveLength(1);
    }
    for (const line of result.stdout.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
  });

  it('petinv help exit-codes names every exit code petinv uses', async () => {
    const result = await runMain(['help', 'exit-codes']);
    expect(result.code).toBe(0);
    for (const code of Object.values(ExitCode))
      expect(result.stdout).toMatch(new RegExp(`\\n {2}${code} +\\w`));
    // In order, as a reader looks one up (12 had come before 11).
    const listed = [...result.stdout.matchAll(/^ {2}(\d+) /gm)].map((match) => Number(match[1]));
    expect(listed).toEqual([...listed].sort((a, b) => a - b));
  });

  it('petinv help environment and formats print their topics, wrapped to the terminal', async () => {
    const environment = await runMain(['help', 'environment'], { tty: true, columns: 60 });
    expect(environment.stdout).toContain('PETINV_API_KEY');
    for (const line of environment.stdout.split('\n')) expect(line.length).toBeLessThanOrEqual(60);
    const formats = await runMain(['help', 'formats']);
    expect(formats.stdout).toContain('petId<TAB>before<TAB>after');
    // Backticks mark code in the source; a terminal shows the code alone.
    expect(formats.stdout).not.toContain('`');
    // A topic fits a screen: what bulk runs read, and rows, are topics of their own.
    for (const topic of ['formats', 'rows', 'input', 'exit-codes', 'environment', 'options']) {
      const help = await runMain(['help', topic], { tty: true, columns: 80 });
      expect(help.stdout.trimEnd().split('\n').length, topic).toBeLessThanOrEqual(40);
    }
    expect((await runMain(['help', 'input'])).stdout).toContain('RFC 4180 quoting');
    expect((await runMain(['help', 'rows'])).stdout).toContain('--no-headers');
  });

  it('an unknown help name is a usage error that suggests the nearest command or topic', async () => {
    const command = await runMain(['help', 'lst']);
    expect(command.code).toBe(2);
    expect(command.stderr).toContain("unknown command 'lst' (Did you mean list?)");
    const topic = await runMain(['help', 'exit-code']);
    expect(topic.code).toBe(2);
    expect(topic.stderr).toContain('(Did you mean exit-codes?)');
    // A word after a topic is no command under it: never "unknown command 'rows' (Did you mean rows?)".
    for (const name of ['rows', 'options']) {
      const extra = await runMain(['help', name, 'fields']);
      expect(extra.code).toBe(2);
      expect(extra.stderr).toBe(
        `petinv: '${name}' is a help topic, with no 'fields' under it: petinv help ${name} (run petinv help)\n`,
      );
    }
  });
});

describe('documents made from the help text', () => {
  it.each(GENERATED_PAGES)('%s: its generated sections are what src/help/ makes (npm run docs)', (page) => {
    const text = readFileSync(join(root, page), 'utf8');
    expect(syncDocument(page, text) === text, `${page} drifted from src/help/: run npm run docs`).toBe(true);
  });

  it('every help topic, and the options, has its section in one page', () => {
    const names = GENERATED_SECTIONS.map((section) => section.name);
    expect(names).toEqual(
      expect.arrayContaining([...HELP_TOPIC_NAMES.map(([name]) => name), 'exit-codes-short']),
    );
    expect(new Set(names).size).toBe(names.length);
    expect(GENERATED_PAGES).toEqual(expect.arrayContaining(['README.md', 'docs/guide.md']));
    expect(() => syncDocument('docs/guide.md', '# nothing generated here\n')).toThrow(/help:/);
  });

  it('the built man page is the one the help text makes, and man reads it without a warning', () => {
    const built = readFileSync(join(root, 'man/petinv.1'), 'utf8');
    expect(built, 'man/petinv.1 is stale: run npm run build').toBe(renderManPage(version));
    for (const topic of HELP_TOPICS) expect(built).toContain(`.SH ${topic.manSection}`);
    for (const path of paths.filter((each) => each[0] !== 'help'))
      expect(built).toContain(`.SS ${path.join(' ')}`.replace(/-/g, '\\-'));
  });

  it.skipIf(spawnSync('man', ['--version']).error !== undefined)(
    'man renders it, warnings on, and none',
    () => {
      const rendered = spawnSync('man', ['--warnings', '-l', join(root, 'man/petinv.1')], {
        env: { ...process.env, MANPAGER: 'cat', MANWIDTH: '80', LANG: 'C.UTF-8' },
        encoding: 'utf8',
      });
      expect(rendered.stderr).toBe('');
      expect(rendered.status).toBe(0);
      expect(rendered.stdout).toContain('EXIT STATUS');
      expect(rendered.stdout).toContain('petinv adjust 42 +5');
    },
  );
});
