import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readConfigFile } from '../../src/config/file';
import { type RunningServer, startInventoryServer } from '../../src/server/start';
import { startFakeServer } from '../helpers/lying-server';
import { runMain, serveInProcess } from '../helpers/main';
import { closedPort, temporaryDirectory } from '../helpers/serve';

/** `petinv status`, and `petinv login` checking a key before it stores it, against a real server. */

const KEY = 'status-key-0123456789';
let server: RunningServer;
let closedUrl: string;
const configDirectory = () => temporaryDirectory('petinv-status-');

beforeAll(async () => {
  server = await startInventoryServer({ port: 0, seed: 2, apiKeys: [KEY] });
  closedUrl = `http://127.0.0.1:${await closedPort()}/v1`;
});
afterAll(() => server.close());

/** A config with `qa` pointing at `url`. */
async function withQa(url: string): Promise<NodeJS.ProcessEnv> {
  const env = { PETINV_CONFIG_DIR: configDirectory() };
  expect((await runMain(['env', 'set-url', 'qa', url], { env })).code).toBe(0);
  return env;
}

const storedKey = (env: NodeJS.ProcessEnv, name: string) => readConfigFile(env).environments[name]?.apiKey;

describe('petinv login checks the key first', () => {
  it('stores a key the service accepts, and says so', async () => {
    const env = await withQa(server.baseUrl);
    const result = await runMain(['login', '--env', 'qa'], { env, input: KEY });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/; the service accepted it \(2 pets in \d+ ms\)\n$/);
    expect(storedKey(env, 'qa')).toBe(KEY);
  });

  it('refuses a key the service answers 401 to, storing nothing; --no-verify stores it anyway', async () => {
    const env = await withQa(server.baseUrl);
    const refused = await runMain(['login', '--env', 'qa'], { env, input: 'wrong-key' });
    expect(refused.code).toBe(4);
    expect(refused.stderr).toBe(
      'petinv: the service in qa refused this API key (401 unauthorized: the API key is not valid); check the key; nothing was stored; or store it unchecked: petinv login --env qa --no-verify\n',
    );
    expect(storedKey(env, 'qa')).toBeUndefined();

    const anyway = await runMain(['login', '--env', 'qa', '--no-verify'], { env, input: 'wrong-key' });
    expect(anyway.code).toBe(0);
    expect(anyway.stderr).toMatch(/; not checked \(--no-verify\)\n$/);
    expect(storedKey(env, 'qa')).toBe('wrong-key');
  });

  it('says when the service cannot be reached, and stores only with --no-verify', async () => {
    const env = await withQa(closedUrl);
    const result = await runMain(['login', '--env', 'qa', '--retries', '0'], { env, input: KEY });
    expect(result.code).toBe(7);
    expect(result.stderr).toContain(
      `petinv: cannot check the API key for qa: cannot reach ${closedUrl}/inventory`,
    );
    expect(result.stderr).toContain(
      'nothing was stored; or store it unchecked: petinv login --env qa --no-verify',
    );
    expect(storedKey(env, 'qa')).toBeUndefined();
    expect((await runMain(['login', '--env', 'qa', '--no-verify'], { env, input: KEY })).code).toBe(0);
    expect(storedKey(env, 'qa')).toBe(KEY);
  });

  it('stores a key for an environment with no URL yet, saying it was not checked', async () => {
    const env = { PETINV_CONFIG_DIR: configDirectory() };
    const result = await runMain(['login', '--env', 'staging', '--create'], { env, input: KEY });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      '; not checked: staging has no URL yet (petinv env set-url staging <url>)',
    );
    expect(storedKey(env, 'staging')).toBe(KEY);
  });
});

describe('petinv status', () => {
  it('the environment, its URL and key and where they came from, and the service answering', async () => {
    const configDir = configDirectory();
    const served = await serveInProcess(['--in-memory', '--seed', '3', '--api-key', KEY], {
      PETINV_CONFIG_DIR: configDir,
    });
    try {
      const env = { PETINV_CONFIG_DIR: configDir };
      const text = await runMain(['--env', 'local', 'status'], { env });
      expect(text.code).toBe(0);
      expect(text.stderr).toBe('');
      const lines = text.stdout.split('\n');
      expect(lines[0]).toBe('env       local  (flag: --env)');
      expect(lines[1]).toBe(
        `base URL  ${served.baseUrl}  (running serve: petinv serve pid ${process.pid}, in memory, started ${lines[1]?.split('started ')[1]}`,
      );
      expect(lines[2]).toMatch(
        /^API key {3}stat… \(21 characters\) {2}\(running serve: .*\); no key is stored for local$/,
      );
      expect(lines.at(-2)).toMatch(/^service {3}answers with this key: 3 pets in \d+(\.\d)? ms$/);

      const json = await runMain(['--env', 'local', 'status', '--json'], { env });
      const report = JSON.parse(json.stdout);
      expect(report.baseUrl).toMatchObject({ value: served.baseUrl, source: 'running serve' });
      expect(report.apiKey).toMatchObject({ source: 'running serve', stored: false });
      expect(report.service).toMatchObject({ ok: true, pets: 3 });
      expect(typeof report.service.ms).toBe('number');
      expect(json.stdout).not.toContain(KEY);
    } finally {
      await served.stop();
    }
  });

  it('exits as the table says when the service does not answer with the key, or cannot be asked', async () => {
    const env = await withQa(server.baseUrl);
    const refused = await runMain(['--env', 'qa', 'status', '--json'], {
      env: { ...env, PETINV_API_KEY: 'wrong-key' },
    });
    expect(refused.code).toBe(4);
    expect(JSON.parse(refused.stdout).service).toEqual({
      ok: false,
      error: { code: 'unauthorized', message: 'the API key is not valid', status: 401 },
    });
    expect(JSON.parse(refused.stderr).error.code).toBe('unauthorized');
    const refusedText = await runMain(['--env', 'qa', 'status'], {
      env: { ...env, PETINV_API_KEY: 'wrong-key' },
    });
    expect(refusedText.stdout).toContain('service   refuses this key (unauthorized, HTTP 401)');

    const down = await runMain(['--env', 'qa', 'status', '--retries', '0', '--base-url', closedUrl], {
      env: { ...env, PETINV_API_KEY: KEY },
    });
    expect(down.code).toBe(7);
    expect(down.stdout).toContain('service   cannot be reached (network)');

    // Reached, then the connection broke, or no answer in time: neither "cannot be reached" nor "answers".
    const hostile = await startFakeServer((request) => {
      if (request.url?.includes('reset')) request.socket.destroy();
    });
    const at = hostile.origin;
    const ask = (path: string) =>
      runMain(
        ['--env', 'qa', 'status', '--retries', '0', '--timeout', '300', '--base-url', `${at}/${path}/v1`],
        {
          env: { ...env, PETINV_API_KEY: KEY },
        },
      );
    const broke = await ask('reset');
    const silent = await ask('hang');
    await hostile.close();
    expect(broke.code).toBe(7);
    expect(broke.stderr).toContain('the service was reached');
    expect(broke.stdout).toContain(
      'service   was reached, but the connection broke before an answer (network)',
    );
    expect(silent.code).toBe(8);
    expect(silent.stdout).toContain('service   does not answer in time (timeout)');

    const unset = await runMain(['--env', 'staging', 'status'], { env });
    expect(unset.code).toBe(3);
    expect(unset.stdout).toContain('base URL  (none)');
    expect(unset.stdout).toContain('service   not asked: see the reason below');
    expect(unset.stderr).toBe(
      'petinv: no base URL for staging; set one: petinv env set-url staging https://<host>/v1\n',
    );
  });
});
