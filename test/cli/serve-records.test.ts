import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findRunningServe, registerServe } from '../../src/config/serve-records';
import { startFakeServer } from '../helpers/lying-server';
import { runMain, type ServedInProcess, serveInProcess } from '../helpers/main';
import { type SpawnedServer, spawnServer, temporaryDirectory } from '../helpers/serve';

/** `petinv serve` on any port, found by `petinv --env local` through the record it leaves while it runs. */

const made: string[] = [];
const running: ServedInProcess[] = [];
const spawned: SpawnedServer[] = [];
afterEach(async () => {
  // A test that fails half-way still leaves no serve behind.
  await Promise.all(spawned.splice(0).map((served) => served.stop('SIGKILL')));
  await Promise.all(running.splice(0).map((served) => served.stop()));
  for (const directory of made.splice(0)) rmSync(directory, { recursive: true, force: true });
});

function configDirectory(): string {
  const directory = temporaryDirectory('petinv-records-');
  made.push(directory);
  return directory;
}

async function serve(configDir: string, args: string[]): Promise<ServedInProcess> {
  const served = await serveInProcess(args, { PETINV_CONFIG_DIR: configDir });
  running.push(served);
  return served;
}

const records = (configDir: string) =>
  existsSync(join(configDir, 'serves'))
    ? readdirSync(join(configDir, 'serves')).filter((name) => name.endsWith('.json'))
    : [];

describe('petinv --env local finds a running serve', () => {
  it('on a port chosen at random, with its key, from a private record removed at a clean stop', async () => {
    const configDir = configDirectory();
    const served = await serve(configDir, ['--in-memory', '--seed', '3']);
    const env = { PETINV_CONFIG_DIR: configDir };

    const list = await runMain(['--env', 'local', 'list'], { env });
    expect(list).toMatchObject({ code: 0, stderr: '' });
    expect(list.stdout.trim().split('\n')).toHaveLength(3);

    const [name] = records(configDir);
    expect(name).toBeDefined();
    const path = join(configDir, 'serves', String(name));
    expect(statSync(join(configDir, 'serves')).mode & 0o777).toBe(0o700);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const record = JSON.parse(readFileSync(path, 'utf8'));
    expect(record).toMatchObject({ pid: process.pid, baseUrl: served.baseUrl, dataFile: null });

    const config = JSON.parse((await runMain(['--json', '--env', 'local', 'config'], { env })).stdout);
    expect(config.baseUrl).toMatchObject({ value: served.baseUrl, source: 'running serve' });
    expect(config.baseUrl.from).toContain(`pid ${process.pid}, in memory`);
    expect(config.apiKey.source).toBe('running serve');

    running.splice(running.indexOf(served), 1);
    expect(await served.stop()).toBe(0);
    expect(records(configDir)).toEqual([]);
  });

  it('petinv env shows local at the running serve, with its key, as the commands that use local find it', async () => {
    const configDir = configDirectory();
    const served = await serve(configDir, ['--in-memory']);
    const env = { PETINV_CONFIG_DIR: configDir };
    const listed = await runMain(['env'], { env });
    expect(listed.stdout.split('\n')).toContain(`\tlocal\t${served.baseUrl}\tkey`);
    const json = JSON.parse((await runMain(['env', '--json'], { env })).stdout);
    expect(json.find((row: { name: string }) => row.name === 'local')).toEqual({
      name: 'local',
      current: false,
      baseUrl: served.baseUrl,
      hasKey: true,
    });
  });

  it('unless the user set a URL for local, which wins', async () => {
    const configDir = configDirectory();
    await serve(configDir, ['--in-memory']);
    const env = { PETINV_CONFIG_DIR: configDir };
    // serve stored its key for local: moving local elsewhere takes that key along, so a script says --yes.
    expect((await runMain(['env', 'set-url', 'local', 'http://127.0.0.1:9/v1'], { env })).code).toBe(10);
    expect((await runMain(['env', 'set-url', 'local', 'http://127.0.0.1:9/v1', '--yes'], { env })).code).toBe(
      0,
    );

    const config = JSON.parse((await runMain(['--json', '--env', 'local', 'config'], { env })).stdout);
    expect(config.baseUrl).toMatchObject({ value: 'http://127.0.0.1:9/v1', source: 'config file' });
    const list = await runMain(['--env', 'local', 'list', '--retries', '0'], { env });
    expect(list.code).toBe(7);
    expect(list.stderr).toContain('cannot reach http://127.0.0.1:9/v1/inventory in local');
  });

  it('two serves on two data files: the most recently started one, then the other once it stops', async () => {
    const configDir = configDirectory();
    const data = configDirectory();
    const first = await serve(configDir, ['--data', join(data, 'first.json'), '--seed', '2']);
    const second = await serve(configDir, ['--data', join(data, 'second.json'), '--seed', '5']);
    const env = { PETINV_CONFIG_DIR: configDir };

    const newest = await runMain(['--env', 'local', 'list'], { env });
    expect(newest.stdout.trim().split('\n')).toHaveLength(5);
    const shown = await runMain(['--env', 'local', 'config'], { env });
    expect(shown.stdout).toContain(second.baseUrl);
    expect(shown.stdout).toContain(`data ${join(data, 'second.json')}`);

    running.splice(running.indexOf(second), 1);
    await second.stop();
    const older = await runMain(['--env', 'local', 'list'], { env });
    expect(older.stdout.trim().split('\n')).toHaveLength(2);
    expect((await runMain(['--env', 'local', 'config'], { env })).stdout).toContain(first.baseUrl);
  });

  it('ignores the record of a serve killed with SIGKILL, and says to start one', async (context) => {
    const configDir = configDirectory();
    const served = await spawnServer(['--in-memory'], { PETINV_CONFIG_DIR: configDir });
    spawned.push(served);
    expect(records(configDir)).toHaveLength(1);
    await served.stop('SIGKILL');
    // The record stays behind: only its pid, now gone, tells that it is stale.
    expect(records(configDir)).toHaveLength(1);

    // Whatever holds serve's default port now (another user's process, say) is never handed the key.
    const squatter = await startFakeServer(undefined, { port: 4010 }).catch(() => undefined);
    if (!squatter) return context.skip(); // Another process owns serve's default port here.
    const connections: unknown[] = [];
    squatter.server.on('connection', (socket) => {
      connections.push(socket);
      socket.destroy();
    });
    try {
      const result = await runMain(['--env', 'local', 'list', '--retries', '0'], {
        env: { PETINV_CONFIG_DIR: configDir },
      });
      expect(result.code).toBe(7);
      expect(result.stderr).toBe(
        'petinv: no petinv serve is running for local (none left a record), so its stored API key is sent nowhere; start one in another terminal: petinv serve, or point local at a service, which its stored key would then go to: petinv env set-url local http://127.0.0.1:PORT/v1\n',
      );
      expect(connections).toHaveLength(0);
    } finally {
      await squatter.close();
    }
  });
});

describe('serve records a client does not trust', () => {
  const announcement = (baseUrl = 'http://127.0.0.1:5999/v1') => ({
    baseUrl,
    apiKey: 'record-key',
    dataFile: null,
    readOnly: false,
  });

  it('is found when private and alive', () => {
    const env = { PETINV_CONFIG_DIR: configDirectory() };
    const registration = registerServe(announcement(), env);
    expect(findRunningServe(env).serve?.baseUrl).toBe('http://127.0.0.1:5999/v1');
    registration.unregister();
    expect(findRunningServe(env).serve).toBeUndefined();
  });

  it('a record other users can read, or one that is a symlink', () => {
    const env = { PETINV_CONFIG_DIR: configDirectory() };
    const { path } = registerServe(announcement(), env);
    chmodSync(path, 0o644);
    const open = findRunningServe(env);
    expect(open.serve).toBeUndefined();
    expect(open.ignored.join('\n')).toContain('is open to other users (mode 0644)');

    const elsewhere = join(configDirectory(), 'record.json');
    writeFileSync(elsewhere, readFileSync(path), { mode: 0o600 });
    rmSync(path);
    symlinkSync(elsewhere, path);
    const linked = findRunningServe(env);
    expect(linked.serve).toBeUndefined();
    expect(linked.ignored.join('\n')).toContain('is a symbolic link');
  });

  it('a records directory that is a symlink or open to others', () => {
    const configDir = configDirectory();
    const real = configDirectory();
    const env = { PETINV_CONFIG_DIR: real };
    registerServe(announcement(), env);
    symlinkSync(join(real, 'serves'), join(configDir, 'serves'));
    expect(findRunningServe({ PETINV_CONFIG_DIR: configDir }).serve).toBeUndefined();

    chmodSync(join(real, 'serves'), 0o755);
    expect(findRunningServe(env).serve).toBeUndefined();
    expect(findRunningServe(env).ignored.join('\n')).toContain('open to other users');
  });

  it('a record naming an address beyond loopback, or a process that is gone', () => {
    const configDir = configDirectory();
    const env = { PETINV_CONFIG_DIR: configDir };
    const { path } = registerServe(announcement('http://192.0.2.1:4010/v1'), env);
    expect(findRunningServe(env).serve).toBeUndefined();
    expect(findRunningServe(env).ignored.join('\n')).toContain('not an http loopback address');
    rmSync(path);

    mkdirSync(join(configDir, 'serves'), { recursive: true });
    const { path: alive } = registerServe(announcement(), env);
    const record = JSON.parse(readFileSync(alive, 'utf8'));
    // A pid far above any pid_max: no such process.
    writeFileSync(alive, JSON.stringify({ ...record, pid: 2 ** 30 }), { mode: 0o600 });
    expect(findRunningServe(env).serve).toBeUndefined();
  });
});

describe("a running serve's key", () => {
  it('goes to that serve alone, and PETINV_API_KEY still wins', async () => {
    const { checkKeyDestination, resolveSettings } = await import('../../src/config/settings');
    const serve = { baseUrl: 'http://127.0.0.1:5999/v1', apiKey: 'record-key', description: 'pid 1' };
    const empty = { environments: {} };
    const settings = resolveSettings({ env: 'local' }, {}, empty, 'config.json', { findServe: () => serve });
    expect(settings.apiKey).toMatchObject({ value: 'record-key', source: 'running serve' });
    expect(() => checkKeyDestination(settings, serve.baseUrl)).not.toThrow();
    expect(() => checkKeyDestination(settings, 'http://127.0.0.1:6000/v1')).toThrow(
      'the API key stored for local belongs to http://127.0.0.1:5999; refusing to send it to http://127.0.0.1:6000',
    );
    const fromVariable = resolveSettings({ env: 'local' }, { PETINV_API_KEY: 'mine' }, empty, 'c', {
      findServe: () => serve,
    });
    expect(fromVariable.apiKey.value).toBe('mine');
    // Not looked for at all when the user gave local an address.
    const byFlag = resolveSettings({ env: 'local', baseUrl: 'http://127.0.0.1:7000/v1' }, {}, empty, 'c', {
      findServe: () => {
        throw new Error('looked for a serve');
      },
    });
    expect(byFlag.baseUrl.source).toBe('flag');
  });
});
