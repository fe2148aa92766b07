import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { describe, expect, it } from 'vitest';
import { version } from '../../package.json';
import { ExitCode } from '../../src/errors';
import { COMMAND_EXAMPLES } from '../../src/help/examples';
import { HELP_TOPICS } from '../../src/help/topics';
import { buildProgram } from '../../src/program/build';
import { renderManPage, syncReadme } from '../../src/program/manual';
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
    '%s --help ends with examples and lists the global options',
    async (path) => {
      expect(
        COMMAND_EXAMPLES[path]?.length,
        `no examples for ${path} in src/help/examples.ts`,
      ).toBeGreaterThan(0);
      const help = await runMain([...path.split(' '), '--help']);
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(/\nGlobal Options:\n[\s\S]*--base-url <url>[\s\S]*--json /);
      expect(help.stdout).toMatch(/\nExamples:\n {2}petinv|\nExamples:\n {2}printf|\nExamples:\n {2}eval/);
      // `petinv help PATH` is the same text.
      expect((await runMain(['help', ...path.split(' ')])).stdout).toBe(help.stdout);
    },
  );

  it('the top-level help ends with the topics and where to read more', async () => {
    const help = await runMain(['--help']);
    for (const topic of HELP_TOPICS) expect(help.stdout).toContain(`petinv help ${topic.name}`);
    expect(help.stdout.trimEnd().split('\n').at(-1)).toMatch(/^Read more: man petinv, and README\.md/);
    expect((await runMain(['help'])).stdout).toBe(help.stdout);
  });

  it('petinv help exit-codes names every exit code petinv uses', async () => {
    const result = await runMain(['help', 'exit-codes']);
    expect(result.code).toBe(0);
    for (const code of Object.values(ExitCode))
      expect(result.stdout).toMatch(new RegExp(`\\n {2}${code} +\\w`));
  });

  it('petinv help environment and formats print their topics, wrapped to the terminal', async () => {
    const environment = await runMain(['help', 'environment'], { tty: true, columns: 60 });
    expect(environment.stdout).toContain('PETINV_API_KEY');
    for (const line of environment.stdout.split('\n')) expect(line.length).toBeLessThanOrEqual(60);
    const formats = await runMain(['help', 'formats']);
    expect(formats.stdout).toContain('petId<TAB>before<TAB>after');
    // Backticks mark code in the source; a terminal shows the code alone.
    expect(formats.stdout).not.toContain('`');
  });

  it('an unknown help name is a usage error that suggests the nearest command or topic', async () => {
    const command = await runMain(['help', 'lst']);
    expect(command.code).toBe(2);
    expect(command.stderr).toContain("unknown command 'lst' (Did you mean list?)");
    const topic = await runMain(['help', 'exit-code']);
    expect(topic.code).toBe(2);
    expect(topic.stderr).toContain('(Did you mean exit-codes?)');
  });
});

describe('documents made from the help text', () => {
  it("the README's help-topic sections are the topics as src/help/topics.ts has them (npm run docs)", () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    expect(syncReadme(readme) === readme, 'README.md drifted from src/help/topics.ts: run npm run docs').toBe(
      true,
    );
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
