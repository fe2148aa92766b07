import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readConfigFile } from '../../src/config/file';
import { nearestName } from '../../src/suggest';
import { useInventoryServer } from '../helpers/inventory-server';
import { runMain, startMain } from '../helpers/main';
import { temporaryDirectory } from '../helpers/serve';

/** Conventions people bring from gh, kubectl and clig.dev: parseable failures, typos, Ctrl-C, TERM=dumb. */

/** A config directory of its own, removed after the file. */
const configDir = (): NodeJS.ProcessEnv => ({ PETINV_CONFIG_DIR: temporaryDirectory('petinv-conventions-') });

const KEY = 'conventions-key';
const served = useInventoryServer(KEY);

/** Everything on stderr must be exactly one line, a JSON error object. */
function oneJsonError(stderr: string) {
  const lines = stderr.split('\n');
  expect(lines, stderr).toHaveLength(2);
  expect(lines[1]).toBe('');
  return JSON.parse(lines[0] ?? '').error;
}

describe('--json: every failure is one JSON line on stderr', () => {
  it.each([
    [[], 'no command given (run petinv help)'],
    [['lst'], "unknown command 'lst' (Did you mean list?)"],
    [['help', 'lst'], "unknown command 'lst' (Did you mean list?)"],
    [['env', 'sett-url'], "unknown command 'sett-url' for 'env' (Did you mean set-url?)"],
    [['config', 'pth'], "unknown command 'pth' for 'config' (Did you mean path?)"],
    [['env', 'use'], "missing required argument 'env'"],
  ])('usage: petinv --json %j', async (args, message) => {
    const result = await runMain(['--json', ...args], { env: configDir() });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(oneJsonError(result.stderr)).toEqual({ code: 'usage', message, status: null, exitCode: 2 });
  });

  it('a failure no service answered has a null status and its exit code; a service error its status', async () => {
    const noUrl = await runMain(['--json', 'list'], { env: configDir() });
    expect(noUrl.code).toBe(3);
    expect(oneJsonError(noUrl.stderr)).toMatchObject({ code: 'config', status: null, exitCode: 3 });
    const notFound = await runMain(['--json', 'set', '424242', '1'], { env: served.env });
    expect(notFound.code).toBe(5);
    expect(oneJsonError(notFound.stderr)).toMatchObject({ status: 404, exitCode: 5 });
  });
});

describe('typos a person can fix', () => {
  it('subcommand typos get the suggestion top-level commands get, without --json too', async () => {
    for (const [args, message] of [
      [
        ['env', 'sett-url'],
        "petinv: unknown command 'sett-url' for 'env' (Did you mean set-url?) (run petinv help env)\n",
      ],
      [['help', 'lst'], "petinv: unknown command 'lst' (Did you mean list?) (run petinv help)\n"],
      [
        ['help', 'env', 'remov'],
        "petinv: unknown command 'remov' for 'env' (Did you mean remove?) (run petinv help env)\n",
      ],
    ] as const) {
      const result = await runMain(args, { env: configDir() });
      expect(result.code).toBe(2);
      expect(result.stderr.startsWith(message), result.stderr).toBe(true);
    }
  });

  it('help NAME and env help NAME still show that help', async () => {
    const help = await runMain(['help', 'env', 'use'], { env: configDir() });
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: petinv env use \[options\] <env>/);
    const envHelp = await runMain(['env', 'help', 'use'], { env: configDir() });
    expect(envHelp.stdout).toBe(help.stdout);
    expect((await runMain(['env'], { env: configDir() })).code).toBe(0);
  });

  it('an unknown environment is an error that suggests the nearest known one', async () => {
    const env = configDir();
    const byFlag = await runMain(['--env', 'prodution', 'list'], { env });
    expect(byFlag.code).toBe(2);
    expect(byFlag.stderr).toBe(
      'petinv: unknown environment prodution (from --env); did you mean production? known: production, staging, local; to add it: petinv env set-url prodution https://<host>/v1 (run petinv help list)\n',
    );
    await runMain(['env', 'set-url', 'qa-east', 'https://qa.example/v1'], { env });
    const byVariable = await runMain(['config'], { env: { ...env, PETINV_ENV: 'qa-eats' } });
    expect(byVariable.code).toBe(2);
    expect(byVariable.stderr).toContain(
      '(from PETINV_ENV); did you mean qa-east? known: production, staging, local, qa-east;',
    );
    const farOff = await runMain(['--env', 'zz', 'list'], { env });
    expect(farOff.stderr).not.toContain('did you mean');
    const use = await runMain(['env', 'use', 'stagign'], { env });
    expect(use.code).toBe(2);
    expect(use.stderr).toContain('unknown environment stagign (did you mean staging?)');
  });

  it('a config file naming an unknown current environment is a configuration error (exit 3)', async () => {
    const env = configDir();
    writeFileSync(
      join(env.PETINV_CONFIG_DIR as string, 'config.json'),
      '{"currentEnv":"gone","environments":{}}',
    );
    const result = await runMain(['list'], { env });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('unknown environment gone (from ');
  });
});

describe('login --env NAME for an environment with no URL', () => {
  it('a script is refused unless --create, naming the nearest known environment', async () => {
    const env = configDir();
    const refused = await runMain(['login', '--env', 'stagin'], { env, input: KEY });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(
      'petinv: stagin is a new environment (did you mean staging?); store its key anyway with --create, or first: petinv env set-url stagin https://<host>/v1 (run petinv help login)\n',
    );
    expect(readConfigFile(env).environments).toEqual({});
    const created = await runMain(['login', '--env', 'stagin', '--create'], { env, input: KEY });
    expect(created.code).toBe(0);
    expect(readConfigFile(env).environments.stagin?.apiKey).toBe(KEY);
  });

  it('an environment with a URL is not asked about; local has its built-in one', async () => {
    const env = configDir();
    await runMain(['env', 'set-url', 'qa', 'https://qa.example/v1'], { env });
    expect((await runMain(['login', '--env', 'qa', '--no-verify'], { env, input: KEY })).code).toBe(0);
    expect((await runMain(['login', '--env', 'local', '--no-verify'], { env, input: KEY })).code).toBe(0);
  });

  it('a person at a terminal is asked; no stores nothing (exit 10), yes goes on to the key', async () => {
    const ask = async (answer: string) => {
      const env = configDir();
      const stdin = new PassThrough();
      const login = startMain(['login', '--env', 'staging'], { env, input: stdin, stdinTty: true });
      await login.stderrLine('staging has no URL yet. Store a key for it anyway? [y/N]');
      stdin.write(answer);
      return { env, stdin, login };
    };
    const no = await ask('n\n');
    expect(await no.login.exited).toBe(10);
    expect(readConfigFile(no.env).environments).toEqual({});

    const yes = await ask('y\n');
    await yes.login.stderrLine('API key for staging (input hidden): ');
    yes.stdin.write(`${KEY}\r`);
    expect(await yes.login.exited).toBe(0);
    expect(readConfigFile(yes.env).environments.staging?.apiKey).toBe(KEY);
  });
});

describe('Ctrl-C is exit 130', () => {
  it('at the hidden key prompt: nothing stored, no message', async () => {
    const env = configDir();
    const result = await runMain(['login', '--env', 'local'], {
      env,
      input: 'half-typed\u0003',
      stdinTty: true,
    });
    expect(result.code).toBe(130);
    expect(result.stderr).toBe('API key for local (input hidden): \n');
    expect(readConfigFile(env).environments).toEqual({});
    const json = await runMain(['--json', 'login', '--env', 'local'], {
      env,
      input: '\u0003',
      stdinTty: true,
    });
    expect(json.code).toBe(130);
    expect(json.stderr.split('\n').at(-2)).toBe(
      '{"error":{"code":"interrupted","message":"interrupted","status":null,"exitCode":130}}',
    );
  });

  it('the end of input (Ctrl-D) at a yes/no question is no, not a silent exit 0', async () => {
    const env = configDir();
    const result = await runMain(['login', '--env', 'staging'], { env, input: '', stdinTty: true });
    expect(result.code).toBe(10);
    expect(result.stderr).toContain('nothing stored; set its URL first');
  });
});

describe('TERM=dumb means no colour', () => {
  it('a table on a terminal is coloured, and not on a dumb one', async () => {
    const coloured = await runMain(['list'], { env: served.env, tty: true });
    expect(coloured.stdout).toContain('\u001b[');
    const dumb = await runMain(['list'], { env: { ...served.env, TERM: 'dumb' }, tty: true });
    expect(dumb.code).toBe(0);
    expect(dumb.stdout).not.toContain('\u001b');
    expect(dumb.stdout).toContain('PET ID');
  });
});

describe('nearestName', () => {
  it.each([
    ['prodution', ['production', 'staging', 'local'], 'production'],
    ['stagnig', ['production', 'staging', 'local'], 'staging'],
    ['LOCAL', ['production', 'staging', 'local'], 'local'],
    ['prod', ['production', 'staging', 'local'], 'production'],
    ['qa', ['production', 'staging', 'local'], undefined],
    ['l', ['production', 'staging', 'local'], undefined],
    ['xyz', [], undefined],
  ])('%s', (typed, known, expected) => {
    expect(nearestName(typed, known)).toBe(expected);
  });
});
