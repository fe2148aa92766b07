import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { answer, useFakeServer } from '../helpers/lying-server';
import { runMain } from '../helpers/main';
import { temporaryDirectory } from '../helpers/serve';

/**
 * A command petinv suggests is pasted into a shell: this test does exactly that (`sh -c`), with a
 * stand-in `petinv` on PATH that records the words it was given. A redirect's Location written to run
 * commands (`$(…)`, `;`, quotes) must arrive as one word, and run nothing (issue 21).
 */

let location = '';
/** Whether the list is answered (a write reads it first) rather than redirected. */
let answerList = false;
const server = useFakeServer((req, res) => {
  if (req.method === 'GET' && answerList) return answer(200, '[]')(req, res);
  if (req.method === 'PATCH') return answer(200, '{"petId":42,"quantity":8,"status":"sold"}')(req, res);
  answer(301, '', { Location: location })(req, res);
});

/** Runs `command` in sh in a fresh directory, with a `petinv` that writes its words, one a line. */
function paste(command: string): { words: string[]; directory: string } {
  const directory = temporaryDirectory();
  const bin = join(directory, 'bin');
  execFileSync('mkdir', [bin]);
  const record = join(directory, 'words');
  writeFileSync(
    join(bin, 'petinv'),
    `#!/bin/sh\nfor word in "$@"; do printf '%s\\n' "$word"; done > '${record}'\n`,
  );
  chmodSync(join(bin, 'petinv'), 0o755);
  execFileSync('sh', ['-c', command], {
    cwd: directory,
    env: { PATH: `${bin}:/usr/bin:/bin` },
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  return {
    words: existsSync(record) ? readFileSync(record, 'utf8').split('\n').slice(0, -1) : [],
    directory,
  };
}

/** The command after "run: ", up to the end of its clause (a URL in it is never cut: it holds no space). */
const advice = (stderr: string) =>
  /run: (petinv [^\n]*?)(?: \(its stored API key|; |\n|$)/.exec(stderr)?.[1] ?? '';

describe('advice safe to paste into a shell', () => {
  it.each([
    [
      "https://evil.example/a$(mkdir$IFS.pwned);mkdir$IFS.pwned2;b'c/v1/inventory",
      "https://evil.example/a$(mkdir$IFS.pwned);mkdir$IFS.pwned2;b'c/v1",
    ],
    [
      'https://evil.example/x|mkdir$IFS.pwned&&mkdir$IFS.pwned2/v1/inventory',
      'https://evil.example/x|mkdir$IFS.pwned&&mkdir$IFS.pwned2/v1',
    ],
    ['https://moved.example/v1/inventory', 'https://moved.example/v1'],
  ])('a redirect to %s: the suggested set-url gets the address as one word', async (to, moved) => {
    location = to;
    const result = await runMain(['list', '--env', 'staging'], {
      env: {
        PETINV_CONFIG_DIR: temporaryDirectory(),
        PETINV_BASE_URL: `${server.origin}/v1`,
        PETINV_API_KEY: 'paste-test-key',
      },
    });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`its stored API key, if any, would then go to ${new URL(to).origin}`);
    const command = advice(result.stderr);
    expect(command).toMatch(/^petinv env set-url staging /);
    const { words, directory } = paste(command);
    expect(words).toEqual(['env', 'set-url', 'staging', moved]);
    expect(existsSync(join(directory, '.pwned'))).toBe(false);
    expect(existsSync(join(directory, '.pwned2'))).toBe(false);
  });

  it('reached by an address, not an environment: no env set-url of host:port, which is no name', async () => {
    location = 'https://moved.example/v1/inventory';
    const result = await runMain(['list'], {
      env: {
        PETINV_CONFIG_DIR: temporaryDirectory(),
        PETINV_BASE_URL: `${server.origin}/v1`,
        PETINV_API_KEY: 'k',
      },
    });
    expect(result.code).toBe(3);
    expect(result.stderr).not.toContain('set-url 127.0.0.1');
    expect(result.stderr).toContain(
      'if the service moved, give its address with --base-url or PETINV_BASE_URL instead: https://moved.example/v1 (the API key would then go to https://moved.example: do so only if you trust it)',
    );
  });

  it('a Location that is not a plain http(s) address is not suggested at all', async () => {
    location = 'javascript:alert(1)//v1/inventory';
    const result = await runMain(['list', '--env', 'staging'], {
      env: {
        PETINV_CONFIG_DIR: temporaryDirectory(),
        PETINV_BASE_URL: `${server.origin}/v1`,
        PETINV_API_KEY: 'k',
      },
    });
    expect(result.stderr).toContain('petinv env set-url staging <url>\n');
  });

  it('a Location holding the key split by an invisible character (UTF-8 on the wire): redacted, not suggested', async () => {
    const key = 'paste-test-key-123';
    // Header bytes go out as they are: the UTF-8 of U+200B and U+202E, written as Latin-1 characters.
    const invisible = (text: string) => Buffer.from(text, 'utf8').toString('latin1');
    location = invisible(`https://evil.example/${key.slice(0, 3)}\u200b${key.slice(3)}/\u202ev1/inventory`);
    const result = await runMain(['list', '--env', 'staging', '-v'], {
      env: {
        PETINV_CONFIG_DIR: temporaryDirectory(),
        PETINV_BASE_URL: `${server.origin}/v1`,
        PETINV_API_KEY: key,
      },
    });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('Location: https://evil.example/[redacted]/v1/inventory)');
    expect(result.stderr).toContain('petinv env set-url staging <url>\n');
    expect(result.stderr).not.toContain(key.slice(3));
    expect(result.stderr).not.toMatch(/[\u0080-\u009f\u00e2]/);
  });

  it('env set-url refused without a terminal: its advice, pasted, moves the environment with --yes', async () => {
    const configDir = temporaryDirectory();
    const env = { PETINV_CONFIG_DIR: configDir };
    expect((await runMain(['env', 'set-url', 'qa', 'https://qa.example/v1'], { env })).code).toBe(0);
    expect((await runMain(['login', '--env', 'qa', '--no-verify'], { env, input: 'qa-key\n' })).code).toBe(0);
    const target = "https://other.example/it's$(x)/v1";
    const refused = await runMain(['env', 'set-url', 'qa', target], { env });
    expect(refused.code).toBe(10);
    expect(refused.stderr).toContain(
      'the API key stored for qa belongs to https://qa.example; with qa at https://other.example, petinv will send that key to https://other.example',
    );
    const { words } = paste(advice(refused.stderr));
    expect(words).toEqual(['env', 'set-url', 'qa', "https://other.example/it's$(x)/v1", '--yes']);
  });

  it('the advice after a mismatch or an unknown outcome names only numbers and the environment', async () => {
    answerList = true;
    const result = await runMain(['set', '42', '7', '--env', 'staging'], {
      env: {
        PETINV_CONFIG_DIR: temporaryDirectory(),
        PETINV_BASE_URL: `${server.origin}/v1`,
        PETINV_API_KEY: 'k',
      },
    }).finally(() => {
      answerList = false;
    });
    expect(result.code).toBe(12);
    expect(result.stderr).toContain(
      'was sent quantity 7, but the service answered PATCH /inventory/42 (200) with quantity 8',
    );
  });
});

describe('env set-url to another origin while a key is stored', () => {
  async function withKey() {
    const env = { PETINV_CONFIG_DIR: temporaryDirectory() };
    await runMain(['env', 'set-url', 'qa', 'https://qa.example/v1'], { env });
    await runMain(['login', '--env', 'qa', '--no-verify'], { env, input: 'qa-key\n' });
    const urlOf = async () =>
      JSON.parse((await runMain(['--json', 'env'], { env })).stdout).find(
        (row: { name: string }) => row.name === 'qa',
      ).baseUrl;
    return { env, urlOf };
  }

  it('warns and asks on a terminal: no keeps it where it was', async () => {
    const { env, urlOf } = await withKey();
    const no = await runMain(['env', 'set-url', 'qa', 'https://other.example/v1'], {
      env,
      stdinTty: true,
      input: 'n\n',
    });
    expect(no.code).toBe(10);
    expect(no.stderr).toContain('petinv: warning: the API key stored for qa belongs to https://qa.example');
    expect(no.stderr).toContain('Send the key stored for qa to https://other.example from now on? [y/N]');
    expect(no.stderr).toContain(
      'petinv: nothing changed: qa stays at https://qa.example; to move it without its key, forget the key first: petinv logout --env qa\n',
    );
    expect(await urlOf()).toBe('https://qa.example/v1');
    const yes = await runMain(['env', 'set-url', 'qa', 'https://other.example/v1'], {
      env,
      stdinTty: true,
      input: 'y\n',
    });
    expect(yes.code).toBe(0);
    expect(await urlOf()).toBe('https://other.example/v1');
  });

  it('--yes moves it with a warning; the same origin, or no key stored, asks nothing', async () => {
    const { env, urlOf } = await withKey();
    const moved = await runMain(['env', 'set-url', 'qa', 'https://other.example/v1', '--yes'], { env });
    expect(moved.code).toBe(0);
    expect(moved.stderr).toBe(
      'petinv: warning: the API key stored for qa belongs to https://qa.example; with qa at https://other.example, petinv will send that key to https://other.example\npetinv: qa is at https://other.example/v1\n',
    );
    const samePlace = await runMain(['env', 'set-url', 'qa', 'https://other.example/api/v1'], { env });
    expect(samePlace.code).toBe(0);
    expect(await urlOf()).toBe('https://other.example/api/v1');
    const fresh = { PETINV_CONFIG_DIR: temporaryDirectory() };
    await runMain(['env', 'set-url', 'qa', 'https://qa.example/v1'], { env: fresh });
    expect((await runMain(['env', 'set-url', 'qa', 'https://other.example/v1'], { env: fresh })).code).toBe(
      0,
    );
  });
});
