import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMain } from '../helpers/main';
import { cleanEnv, PETINV_BIN, type SpawnedServer, spawnServer, temporaryDirectory } from '../helpers/serve';

/** The built bin: `petinv list --watch` in a pipe sees changes another process makes, and ends on EPIPE. */

const KEY = 'watch-e2e-key';
let server: SpawnedServer;
let env: NodeJS.ProcessEnv;
let configDir: string;

beforeAll(async () => {
  server = await spawnServer(['--in-memory', '--api-key', KEY]);
  configDir = temporaryDirectory();
  env = {
    PETINV_CONFIG_DIR: configDir,
    PETINV_ENV: 'local',
    PETINV_BASE_URL: server.baseUrl,
    PETINV_API_KEY: KEY,
  };
});
afterAll(async () => {
  await server.stop();
  rmSync(configDir, { recursive: true, force: true });
});

const polls = () =>
  server
    .stderr()
    .split('\n')
    .filter((line) => line.includes('"path":"/v1/inventory"'));

function spawnWatch(args: string[]) {
  const child = spawn(process.execPath, [PETINV_BIN, 'list', '--watch', '--interval', '0.1', ...args], {
    env: { ...cleanEnv(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, exited, lines: createInterface({ input: child.stdout })[Symbol.asyncIterator]() };
}

async function until(check: () => boolean) {
  for (let waited = 0; !check(); waited += 25) {
    if (waited > 10_000) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('petinv list --watch, whole processes', () => {
  it('turns changes made by another process into events; unchanged polls print nothing', async () => {
    const watch = spawnWatch([]);
    let printed = '';
    watch.child.stdout.on('data', (chunk) => (printed += chunk));
    const before = polls().length;
    await until(
      () =>
        polls()
          .slice(before)
          .filter((line) => line.includes('"status":304')).length >= 3,
    );
    expect(printed).toBe('');
    expect((await runMain(['set', '5', '123'], { env })).code).toBe(0);
    const event = JSON.parse(String((await watch.lines.next()).value));
    expect(event).toMatchObject({ petId: 5, to: 123, status: expect.any(String) });
    expect(typeof event.from).toBe('number');
    watch.child.kill('SIGINT');
    expect(await watch.exited).toBe(0);
  });

  it('stops at the first event after its reader went away (petinv list --watch | head -1): status 141', async () => {
    const watch = spawnWatch(['--initial']);
    expect(JSON.parse(String((await watch.lines.next()).value)).petId).toBe(1);
    watch.child.stdout.destroy();
    // A pipe tells its writer that the reader left only when it writes: the next change does.
    expect((await runMain(['set', '6', '321'], { env })).code).toBe(0);
    expect(await watch.exited).toBe(141);
    expect(watch.child.stderr.read()).toBeNull();
  });
});
