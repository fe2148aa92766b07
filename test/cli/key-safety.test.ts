import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readConfigFile } from '../../src/config/file';
import { answer, startFakeServer, useFakeServer } from '../helpers/lying-server';
import { type MainOptions, runMain } from '../helpers/main';
import { temporaryDirectory } from '../helpers/serve';

const KEY = 'key-safety-0123456789abcdef';

/** Runs petinv in-process and expects it to fail: its exit status and its one-line message. */
async function failure(args: string[], options: MainOptions): Promise<{ exitCode: number; message: string }> {
  const result = await runMain(args, options);
  expect(result.code).not.toBe(0);
  expect(result.stderr).toMatch(/^petinv: [^\n]*\n$/);
  return { exitCode: result.code, message: result.stderr.slice('petinv: '.length, -1) };
}

/** Runs petinv in-process and expects it to succeed. */
async function success(args: string[], options: MainOptions) {
  const result = await runMain(args, options);
  expect(result.code, result.stderr).toBe(0);
  return result;
}

/** A tiny inventory service that records every request it gets, with its Authorization header. */
async function recordingService() {
  const seen: string[] = [];
  const server = await startFakeServer((req, res) => {
    seen.push(`${req.method} ${req.url} ${req.headers.authorization ?? '-'}`);
    answer(200, '[]')(req, res);
  });
  return { ...server, url: `${server.origin}/v1`, seen };
}

describe('a stored key goes only to its own origin', () => {
  let home: Awaited<ReturnType<typeof recordingService>>;
  let other: Awaited<ReturnType<typeof recordingService>>;
  beforeAll(async () => {
    home = await recordingService();
    other = await recordingService();
  });
  afterAll(async () => {
    await home.close();
    await other.close();
  });

  it('refuses --base-url and PETINV_BASE_URL elsewhere (exit 3); PETINV_API_KEY is the way round', async () => {
    const env = { PETINV_CONFIG_DIR: temporaryDirectory() };
    await success(['env', 'set-url', 'qa', home.url], { env });
    await success(['login', '--env', 'qa', '--no-verify'], { env, input: KEY });
    await success(['list', '--env', 'qa'], { env });
    expect(home.seen).toEqual([`GET /v1/inventory Bearer ${KEY}`]);

    const byFlag = await failure(['list', '--env', 'qa', '--base-url', other.url], { env });
    expect(byFlag.exitCode).toBe(3);
    expect(byFlag.message).toBe(
      `the API key stored for qa belongs to ${new URL(home.url).origin}; refusing to send it to ${new URL(other.url).origin} (from --base-url); pass that service's key in PETINV_API_KEY, or point qa there for good, and its stored key with it: petinv env set-url qa ${other.url}`,
    );
    const byVariable = await failure(['list', '--env', 'qa'], {
      env: { ...env, PETINV_BASE_URL: other.url },
    });
    expect(byVariable.message).toContain('(from PETINV_BASE_URL)');
    expect(other.seen).toEqual([]);

    await success(['list', '--env', 'qa', '--base-url', other.url], {
      env: { ...env, PETINV_API_KEY: 'other-key' },
    });
    expect(other.seen).toEqual(['GET /v1/inventory Bearer other-key']);
  });
});

describe('base URLs with a user name or password', () => {
  it('are refused wherever they enter (exit 2 from the command line, else 3), the password never shown', async () => {
    const url = 'https://ops:hunter2@inventory.example/v1';
    const dir = temporaryDirectory();
    const env = { PETINV_CONFIG_DIR: dir, PETINV_API_KEY: KEY };
    const fromCommandLine = [
      await failure(['list', '--base-url', url], { env }),
      await failure(['env', 'set-url', 'qa', url], { env }),
    ];
    for (const error of fromCommandLine) {
      expect(error.exitCode).toBe(2);
      expect(error.message).toContain('must not hold a user name or password');
      expect(error.message).not.toContain('hunter2');
    }
    const errors = [await failure(['list'], { env: { ...env, PETINV_BASE_URL: url } })];
    writeFileSync(
      join(dir, 'config.json'),
      JSON.stringify({ environments: { production: { baseUrl: url } } }),
      {
        mode: 0o600,
      },
    );
    errors.push(await failure(['list'], { env }));
    for (const error of errors) {
      expect(error.exitCode).toBe(3);
      expect(error.message).toContain('must not hold a user name or password');
      expect(error.message).not.toContain('hunter2');
    }
    const shown = await success(['--json', 'config', '--base-url', url], {
      env: { PETINV_CONFIG_DIR: temporaryDirectory() },
    });
    expect(JSON.parse(shown.stdout).baseUrl.value).toBe('https://***@inventory.example/v1');
  });
});

describe('API keys a header cannot carry', () => {
  it('are a configuration error at login and at use (exit 3), never echoed', async () => {
    const env = { PETINV_CONFIG_DIR: temporaryDirectory() };
    const login = await failure(['login', '--env', 'staging', '--create'], {
      env,
      input: 'abc\u0007def\r\nX-Injected: 1',
    });
    expect(login.exitCode).toBe(3);
    expect(login.message).toBe(
      'the API key for staging was not stored: it holds a character an HTTP header cannot carry (white space, a control or non-ASCII character) at position 4',
    );
    expect(readConfigFile(env).environments.staging).toBeUndefined();
    const use = await failure(['list', '--env', 'staging', '--base-url', 'https://staging.example/v1'], {
      env: { ...env, PETINV_API_KEY: 'secret key' },
    });
    expect(use.exitCode).toBe(3);
    expect(use.message).toBe(
      'the API key for staging (from PETINV_API_KEY) holds a character an HTTP header cannot carry (white space, a control or non-ASCII character) at position 7; fix PETINV_API_KEY',
    );
  });
});

describe('the config file in commands', () => {
  it('a corrupt file is named with its position, its content (keys) never echoed', async () => {
    const dir = temporaryDirectory();
    writeFileSync(join(dir, 'config.json'), '{"environments": {"staging": {"apiKey": sk_live_SECRET}}}', {
      mode: 0o600,
    });
    const error = await failure(['env'], { env: { PETINV_CONFIG_DIR: dir } });
    expect(error.exitCode).toBe(3);
    expect(error.message).toBe(
      `config file ${join(dir, 'config.json')} is not valid JSON at line 1, column 41: an unexpected character; fix or delete it`,
    );
  });

  it('a directory others can write is refused with the fix, by every command', async () => {
    const dir = temporaryDirectory();
    chmodSync(dir, 0o757);
    const error = await failure(['config'], { env: { PETINV_CONFIG_DIR: dir } });
    expect(error.exitCode).toBe(3);
    expect(error.message).toBe(
      `config directory ${dir} can be changed by other users (mode 0757); petinv will not trust it: chmod 700 ${dir}`,
    );
  });

  it('keys are masked to at most four characters, and only long ones; env shows none', async () => {
    const env = { PETINV_CONFIG_DIR: temporaryDirectory() };
    await success(['login', '--env', 'staging', '--create'], { env, input: 'sk_live_abcdefghijkl' });
    await success(['login', '--env', 'local', '--no-verify'], { env, input: 'short-key' });
    const staging = await success(['config', '--env', 'staging'], { env });
    expect(staging.stdout).toContain('API key  sk_l… (20 characters)');
    const local = await success(['--json', 'config', '--env', 'local'], { env });
    expect(JSON.parse(local.stdout).apiKey.value).toBe('**** (9 characters)');
    for (const tty of [true, false]) {
      const list = await success(['env', '--no-color'], { env, tty });
      expect(list.stdout).not.toMatch(/sk_l|short/);
    }
  });

  it('a config directory petinv cannot write is a configuration error naming it', async () => {
    const dir = temporaryDirectory();
    writeFileSync(join(dir, 'file'), '');
    const configDir = join(dir, 'file', 'petinv');
    const error = await failure(['env', 'set-url', 'qa', 'https://qa.example/v1'], {
      env: { PETINV_CONFIG_DIR: configDir },
    });
    expect(error.exitCode).toBe(3);
    expect(error.message).toBe(`cannot write config directory ${configDir} (ENOTDIR)`);
  });
});

describe('a service that echoes the key', () => {
  /** Answers each base path its own way, the key in what it says: an error, a redirect, a warning header. */
  const echoing = useFakeServer((req, res) => {
    const key = (req.headers.authorization ?? '').slice('Bearer '.length);
    const split = key.split('').join('\u001b[m');
    if (req.url?.startsWith('/refuses/'))
      res
        .writeHead(401, { 'Content-Type': 'application/json' })
        .end(JSON.stringify({ code: 'unauthorized', message: `no such key ${key}`, status: 401 }));
    else if (req.url?.startsWith('/fails/')) res.writeHead(500).end(`bad token ${split}`);
    else if (req.url?.startsWith('/moves/'))
      res.writeHead(302, { Location: `https://elsewhere.example/v1/inventory?k=${key}` }).end();
    else if (req.url?.startsWith('/warns/'))
      res.writeHead(200, { Deprecation: `for ${key}`, 'Content-Type': 'application/json' }).end('[]');
    // -vv shows at most 2000 characters of a body: the key starts just before the cut.
    else res.writeHead(500).end(`${'x'.repeat(1970)}${split}`);
  });

  it('never shows it on stderr: errors, --json errors, a Location, a warning, a body cut by -vv', async () => {
    const run = (path: string, ...args: string[]) =>
      runMain(['list', '--retries', '0', ...args], {
        env: {
          PETINV_CONFIG_DIR: temporaryDirectory(),
          PETINV_API_KEY: KEY,
          PETINV_BASE_URL: `${echoing.origin}${path}`,
        },
      });
    const refused = await run('/refuses/v1');
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain('(401 unauthorized: no such key [redacted])');
    const refusedJson = await run('/refuses/v1', '--json');
    expect(JSON.parse(refusedJson.stderr).error.message).toBe('no such key [redacted]');
    const failed = await run('/fails/v1');
    expect(failed.code).toBe(8);
    expect(failed.stderr).toContain('(500: bad token [redacted])');
    const moved = await run('/moves/v1');
    expect(moved.code).toBe(3);
    expect(moved.stderr).toContain('Location: https://elsewhere.example/v1/inventory?k=[redacted])');
    const warned = await run('/warns/v1');
    expect(warned.code).toBe(0);
    expect(warned.stderr).toContain('(Deprecation: for [redacted])');
    const traced = await run('/cut/v1', '-vv');
    expect(traced.code).toBe(8);
    expect(traced.stderr).toMatch(/^< body \(\d+ bytes\): x+\[redacted\]…$/m);
    for (const result of [refused, refusedJson, failed, moved, warned, traced])
      expect(result.stderr).not.toMatch(/key-s|ey-safety|0123456789/);
  });
});
