import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runMain } from '../helpers/main';
import { PETINV_BIN, temporaryDirectory } from '../helpers/serve';

/**
 * The completion scripts in real shells, calling the built bin's `__complete` as a TAB would. bash is
 * driven through its completion function with COMP_WORDS and COMP_CWORD; fish answers `complete -C`
 * without a terminal; zsh is checked to load, with and without compinit run first.
 */

const installed = (shell: string) => spawnSync('sh', ['-c', `command -v ${shell}`]).status === 0;

let home: string;
let env: NodeJS.ProcessEnv;
const script: Record<string, string> = {};

beforeAll(async () => {
  home = temporaryDirectory('petinv-completion-');
  env = { PETINV_CONFIG_DIR: join(home, 'config'), HOME: home, ZDOTDIR: home };
  expect((await runMain(['env', 'set-url', 'qa-east', 'https://qa.example/v1'], { env })).code).toBe(0);
  for (const shell of ['bash', 'zsh', 'fish']) {
    const printed = await runMain(['completion', shell], { env });
    expect(printed.code).toBe(0);
    writeFileSync(join(home, `petinv.${shell}`), printed.stdout);
    script[shell] = join(home, `petinv.${shell}`);
  }
});

/** Runs a shell script with `petinv` standing for the built bin; stdout, stderr and status. */
function shell(name: string, args: string[], text: string) {
  const result = spawnSync(name, [...args, text], {
    env: { ...process.env, ...env, PATH: process.env.PATH },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** `petinv __complete` in-process: the directive and the candidates' values. */
async function complete(...words: string[]) {
  const result = await runMain(['__complete', ...words], { env });
  expect(result).toMatchObject({ code: 0, stderr: '' });
  const [directive, ...lines] = result.stdout.trimEnd().split('\n');
  return { directive, values: lines.map((line) => line.split('\t')[0]), lines };
}

/** petinv's commands in the order completion offers them (help comes after them, with its topics). */
const COMMANDS = [
  'list',
  'get',
  'set',
  'adjust',
  'history',
  'undo',
  'summary',
  'env',
  'login',
  'logout',
  'config',
  'status',
  'serve',
  'completion',
];

describe('petinv __complete answers from the declarations', () => {
  it('commands with descriptions, after global options too; __complete itself is not one', async () => {
    const top = await complete('');
    expect(top.directive).toBe(':values');
    expect(top.values).toEqual([...COMMANDS, 'help']);
    expect(top.lines).toContain('adjust\traise or lower a quantity (atomic on serve)');
    expect((await complete('--env', 'local', '--timeout', '5', 'l')).values).toEqual([
      'list',
      'login',
      'logout',
    ]);
  });

  it('option names: the command own and the global ones, not those already given', async () => {
    const options = (await complete('list', '--sort', 'quantity', '--')).values;
    expect(options).toEqual(expect.arrayContaining(['--status', '--low', '--env', '--json', '--help']));
    expect(options).not.toContain('--sort');
    expect(options).not.toContain('--file');
  });

  it('values: environments, statuses (a comma list), sort keys, shells', async () => {
    expect((await complete('--env', '')).values).toEqual(['production', 'staging', 'local', 'qa-east']);
    expect((await complete('login', '--env', 'q')).values).toEqual(['qa-east']);
    expect((await complete('env', 'use', '')).values).toEqual(['production', 'staging', 'local', 'qa-east']);
    expect((await complete('env', 'remove', '')).values).toEqual(['qa-east']);
    expect((await complete('list', '--status', '')).values).toEqual(['available', 'pending', 'sold']);
    expect((await complete('list', '--status', 'sold,')).values).toEqual(['sold,available', 'sold,pending']);
    expect((await complete('list', '--sort', '')).values).toEqual(['petId', 'quantity', 'status']);
    expect((await complete('completion', '')).values).toEqual(['bash', 'zsh', 'fish']);
  });

  it('the value of every option with a fixed set, as --option VALUE and as --option=VALUE', async () => {
    const formats = ['table', 'tsv', 'csv', 'json', 'ndjson', 'xlsx'];
    expect((await complete('list', '-o', '')).values).toEqual(formats);
    expect((await complete('--output', 'n')).values).toEqual(['ndjson']);
    expect((await complete('env', '-o', 't')).values).toEqual(['table', 'tsv']);
    expect((await complete('list', '--output=')).values).toEqual(
      formats.map((format) => `--output=${format}`),
    );
    expect((await complete('-o=c')).values).toEqual(['-o=csv']);
    expect((await complete('--env=')).values).toEqual(
      ['production', 'staging', 'local', 'qa-east'].map((name) => `--env=${name}`),
    );
    expect((await complete('list', '-e=q')).values).toEqual(['-e=qa-east']);
    expect((await complete('list', '--sort=q')).values).toEqual(['--sort=quantity']);
    expect((await complete('list', '--status=sold,p')).values).toEqual(['--status=sold,pending']);
    expect((await complete('set', '--file=x')).directive).toBe(':files');
    // Short options written together, as commander splits them: -vo json is -v -o json.
    expect((await complete('-vo', '')).values).toEqual(formats);
    expect((await complete('list', '-ve', 'q')).values).toEqual(['qa-east']);
    expect((await complete('-vo', 'json', 'l')).values).toEqual(['list', 'login', 'logout']);
    // A value written on its short option: -ojson, as commander reads it.
    expect((await complete('-oj')).values).toEqual(['-ojson']);
    expect((await complete('list', '-voc')).values).toEqual(['-vocsv']);
    // ... or after an = (-vo=json, as commander reads it): zsh and fish keep the word whole.
    expect((await complete('-vo=j')).values).toEqual(['-vo=json']);
    expect((await complete('list', '-ve=q')).values).toEqual(['-ve=qa-east']);
    expect((await complete('-vo=json', 'l')).values).toEqual(['list', 'login', 'logout']);
    // An option that takes no value, or one with no fixed set, offers nothing after its =.
    expect((await complete('list', '--low=')).values).toEqual([]);
    expect((await complete('list', '--reverse=')).values).toEqual([]);
  });

  it('help: the commands and the help topics, then the subcommands of the command named', async () => {
    const top = await complete('help', '');
    expect(top.values).toEqual([
      ...COMMANDS,
      'options',
      'exit-codes',
      'environment',
      'formats',
      'rows',
      'input',
    ]);
    expect(top.lines).toContain('exit-codes\twhat each exit status means');
    expect(top.lines).toContain('options\tthe options every command takes');
    expect((await complete('--json', 'help', 'e')).values).toEqual(['env', 'exit-codes', 'environment']);
    expect((await complete('help', 'env', '')).values).toEqual(['list', 'set-url', 'use', 'remove']);
    expect((await complete('help', 'config', '')).values).toEqual(['path']);
    expect((await complete('help', 'list', '')).values).toEqual([]);
  });

  it('file names after --file, --data and --api-key-file, and nowhere else', async () => {
    expect((await complete('set', '--file', '')).directive).toBe(':files');
    expect((await complete('serve', '--data', 'x')).directive).toBe(':files');
    expect((await complete('serve', '--api-key-file', '')).directive).toBe(':files');
    for (const words of [
      ['set', ''],
      ['adjust', '4', ''],
      ['--base-url', ''],
      ['list', '--low', ''],
    ])
      expect(await complete(...words)).toEqual({ directive: ':values', values: [], lines: [] });
  });

  it('a broken config file still completes the built-in environments, and says nothing', async () => {
    const broken = join(home, 'broken');
    mkdirSync(broken);
    writeFileSync(join(broken, 'config.json'), '{not json');
    const result = await runMain(['__complete', '--env', ''], { env: { PETINV_CONFIG_DIR: broken } });
    expect(result).toEqual({ code: 0, stdout: ':values\nproduction\t\nstaging\t\nlocal\t\n', stderr: '' });
  });
});

describe.skipIf(!installed('bash'))('bash (skipped when bash is not installed)', () => {
  // A petinv process per case, one after another: 2 s on an idle machine, past 20 s on a loaded one (a
  // fresh clone's npm test beside a build timed out), so the shell's own limit of 60 s is the test's.
  it('the completion function fills COMPREPLY from COMP_WORDS and COMP_CWORD', () => {
    const cases: Array<[string[], string[]]> = [
      [
        ['petinv', ''],
        [...COMMANDS, 'help'],
      ],
      [['petinv', '--env', 'local', 'a'], ['adjust']],
      [['petinv', '-e', 'qa'], ['qa-east']],
      [['petinv', 'env', 'u'], ['use']],
      [['petinv', 'list', '--status', 'p'], ['pending']],
      [['petinv', 'list', '--sort', 'q'], ['quantity']],
      [['petinv', 'completion', 'f'], ['fish']],
      [['petinv', 'set', '--file', 'petinv.z'], ['petinv.zsh']],
      [['petinv', 'set', 'petinv.z'], []],
      [
        ['petinv', 'list', '-o', ''],
        ['table', 'tsv', 'csv', 'json', 'ndjson', 'xlsx'],
      ],
      [['petinv', '--output', 'n'], ['ndjson']],
      // bash splits `--env=NAME` at the = (COMP_WORDBREAKS), and completes the word after it.
      [
        ['petinv', '--env', '='],
        ['production', 'staging', 'local', 'qa-east'],
      ],
      [['petinv', '--env', '=', 'q'], ['qa-east']],
      [['petinv', 'list', '--env', '=', 'l', '--sort', '=', 's'], ['status']],
      [['petinv', 'list', '--status', '=', 'sold,a'], ['sold,available']],
      [['petinv', 'list', '--output', '=', 'j'], ['json']],
      [
        ['petinv', '--env', '=', 'local', 'l'],
        ['list', 'login', 'logout'],
      ],
      [['petinv', 'set', '--file', '=', 'petinv.f'], ['petinv.fish']],
      // With = left out of COMP_WORDBREAKS the word stays whole, and so does the answer.
      [['petinv', '--env=q'], ['--env=qa-east']],
    ];
    const lines = [
      `petinv() { "${process.execPath}" "${PETINV_BIN}" "$@"; }`,
      `source "${script.bash}"`,
      `cd "${home}"`,
    ];
    for (const [words] of cases) {
      const quoted = words.map((word) => `'${word}'`).join(' ');
      lines.push(`COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; _petinv`);
      lines.push(`(IFS=,; echo "\${COMPREPLY[*]}")`);
    }
    const result = shell('bash', ['--norc', '-c'], lines.join('\n'));
    expect(result.stderr).toBe('');
    expect(result.stdout.split('\n').slice(0, -1)).toEqual(cases.map(([, expected]) => expected.join(',')));
  }, 60_000);
});

describe.skipIf(!installed('fish'))('fish (skipped when fish is not installed)', () => {
  it('loads, and completes with descriptions', () => {
    const result = shell(
      'fish',
      ['--no-config', '-c'],
      `function petinv; "${process.execPath}" "${PETINV_BIN}" $argv; end
source "${script.fish}"
complete -C 'petinv --env local ad'
complete -C 'petinv --env qa'
complete -C 'petinv list -o j'
complete -C 'petinv --env=qa'
complete -C 'petinv list --output=nd'
complete -C 'petinv list --sort q'
complete -C 'petinv list --status=sold,p'`,
    );
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe(
      [
        'adjust\traise or lower a quantity (atomic on serve)',
        'qa-east',
        'json',
        '--env=qa-east',
        '--output=ndjson',
        'quantity',
        '--status=sold,pending',
        '',
      ].join('\n'),
    );
  });

  it('file names after --file= and --data=, each with its option before it', () => {
    const directory = join(home, 'sheets');
    mkdirSync(directory, { recursive: true });
    writeFileSync(join(directory, 'count.csv'), 'petId,quantity\n');
    const result = shell(
      'fish',
      ['--no-config', '-c'],
      `function petinv; "${process.execPath}" "${PETINV_BIN}" $argv; end
source "${script.fish}"
complete -C 'petinv set --file=${directory}/co'
complete -C 'petinv serve --data=${directory}/co'
complete -C 'petinv set --file ${directory}/co'`,
    );
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe(
      [`--file=${directory}/count.csv`, `--data=${directory}/count.csv`, `${directory}/count.csv`, ''].join(
        '\n',
      ),
    );
  });
});

describe.skipIf(!installed('zsh'))('zsh (skipped when zsh is not installed)', () => {
  it('the completion function offers what __complete answers, for words as zsh keeps them', () => {
    // Outside a completion widget zsh's own compadd, _describe and _files cannot run: these stand-ins
    // print what the function hands them, which is what zsh would offer.
    const cases: Array<[string[], string[]]> = [
      [['petinv', 'ad'], ['adjust:raise or lower a quantity (atomic on serve)']],
      [
        ['petinv', '--env', 'local', 'l'],
        [
          'list:the stock of every pet; --watch its changes',
          "login:store an environment's API key",
          "logout:forget an environment's API key",
        ],
      ],
      [['petinv', '-e', 'qa'], ['qa-east']],
      [['petinv', '--env=qa'], ['--env=qa-east']],
      [['petinv', 'list', '-o', 'j'], ['json']],
      [
        ['petinv', 'list', '--output=t'],
        ['--output=table', '--output=tsv'],
      ],
      [['petinv', 'list', '--sort=q'], ['--sort=quantity']],
      [['petinv', 'list', '--status', 'sold,a'], ['sold,available']],
      [
        ['petinv', 'set', '--file=x'],
        ['compset -P *=', '_files'],
      ],
      [['petinv', 'set', '--file', 'x'], ['_files']],
    ];
    const lines = [
      `petinv() { "${process.execPath}" "${PETINV_BIN}" "$@" }`,
      'compdef() { : }',
      `source "${script.zsh}"`,
      `_describe() { local name=$4; print -rl -- "\${(@P)name}" }`,
      'compadd() { [[ $1 == -- ]] && shift; print -rl -- "$@" }',
      'compset() { print -r -- "compset $*" }',
      '_files() { print -r -- _files }',
    ];
    for (const [words] of cases) {
      const quoted = words.map((word) => `'${word}'`).join(' ');
      lines.push(`words=(${quoted}); CURRENT=${words.length}; _petinv; print -r -- ---`);
    }
    const result = shell('zsh', ['-f', '-c'], lines.join('\n'));
    expect(result.stderr).toBe('');
    expect(result.stdout.split('---\n').slice(0, -1)).toEqual(
      cases.map(([, expected]) => expected.map((line) => `${line}\n`).join('')),
    );
  });

  it('loads after compinit and registers _petinv', () => {
    const result = shell(
      'zsh',
      ['-f', '-c'],
      `autoload -Uz compinit && compinit -D
source "${script.zsh}"
print -r -- "\${_comps[petinv]}"`,
    );
    expect(result).toEqual({ code: 0, stdout: '_petinv\n', stderr: '' });
  });

  it('loads in a plain .zshrc without compinit, and registers at the first prompt', () => {
    const result = shell(
      'zsh',
      ['-f', '-c'],
      `source "${script.zsh}"
print -r -- "before: \${_comps[petinv]-none}"
for hook in $precmd_functions; do $hook; done
print -r -- "after: \${_comps[petinv]} \${#precmd_functions}"`,
    );
    expect(result).toEqual({ code: 0, stdout: 'before: none\nafter: _petinv 0\n', stderr: '' });
  });
});
