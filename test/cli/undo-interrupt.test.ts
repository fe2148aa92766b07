import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import {
  cleanEnv,
  PETINV_BIN,
  runPetinv,
  type SpawnedServer,
  spawnServer,
  temporaryDirectory,
} from '../helpers/serve';

/**
 * An undo quit at once by a second Ctrl-C, against a real serve whose every answer takes a while: its
 * words must not send the user to `petinv undo`, which would take back the undo and write the count again.
 */
const KEY = 'undo-interrupt-key';
let served: SpawnedServer | undefined;
let killedServe: SpawnedServer | undefined;
afterAll(async () => {
  await served?.stop();
  await killedServe?.stop();
});
/** A petinv of its own (config, state) for the serve at `baseUrl`. */
const envFor = (baseUrl: string) => ({
  ...cleanEnv(),
  PETINV_CONFIG_DIR: temporaryDirectory(),
  XDG_STATE_HOME: temporaryDirectory(),
  PETINV_ENV: 'local',
  PETINV_BASE_URL: baseUrl,
  PETINV_API_KEY: KEY,
});
/** Six pets set to 100 and on: the run each test stops or undoes. */
const input = Array.from({ length: 6 }, (_, index) => `${index + 1} ${100 + index}\n`).join('');

it('a second Ctrl-C during an undo says to run that undo again, not to undo it (QA)', async () => {
  served = await spawnServer(['--in-memory', '--seed', '6', '--api-key', KEY, '--latency', '600']);
  const env = envFor(served.baseUrl);
  expect((await runPetinv(['set', '-', '--concurrency', '8'], { env, input })).code).toBe(0);
  const [run] = JSON.parse((await runPetinv(['history', '--json'], { env })).stdout);

  const undo = spawn(
    process.execPath,
    [PETINV_BIN, 'undo', run.id, '--concurrency', '1', '--pipelining', '1'],
    {
      env,
    },
  );
  let stderr = '';
  undo.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise((resolve) => undo.on('close', (code, signal) => resolve({ code, signal })));
  // Once the undo's plan is in the history its first update goes out (600 ms each): stopped then, twice.
  const history = join(env.XDG_STATE_HOME, 'petinv', 'history');
  // The directory also holds lock and temporary files, which come and go while it is read.
  const planned = () =>
    readdirSync(history).some(
      (name) =>
        name.endsWith('.jsonl') && readFileSync(join(history, name), 'utf8').includes(`"undo ${run.id}"`),
    );
  while (!planned()) await new Promise((resolve) => setTimeout(resolve, 10));
  await new Promise((resolve) => setTimeout(resolve, 150));
  undo.kill('SIGINT');
  const said = stderr.length;
  await Promise.race([
    new Promise<void>((resolve) => {
      const look = setInterval(() => {
        if (stderr.length === said) return;
        clearInterval(look);
        resolve();
      }, 5);
    }),
    exited,
  ]);
  undo.kill('SIGINT');
  expect(await exited).toEqual({ code: null, signal: 'SIGINT' });
  expect(stderr).toContain('quit at once (SIGINT)');
  expect(stderr).toContain(`run petinv undo ${run.id} again to send them`);
  expect(stderr).not.toContain('petinv undo takes');
});

it('the undo of a run killed before its writes names no pet as changed: each holds its before (QA: 234 named)', async () => {
  killedServe = await spawnServer(['--in-memory', '--seed', '6', '--api-key', KEY, '--latency', '1000']);
  const env = envFor(killedServe.baseUrl);
  const set = spawn(process.execPath, [PETINV_BIN, 'set', '-'], { env });
  set.stdin.end(input);
  const exited = new Promise((resolve) => set.on('close', resolve));
  // Killed outright once its plan is in the history, long before the first answer (1 s): nothing written.
  const history = join(env.XDG_STATE_HOME, 'petinv', 'history');
  const planned = () =>
    tryList(history).some((name) => readFileSync(join(history, name), 'utf8').includes('"set -"'));
  while (!planned()) await new Promise((resolve) => setTimeout(resolve, 10));
  set.kill('SIGKILL');
  await exited;
  const [run] = JSON.parse((await runPetinv(['history', '--json'], { env })).stdout);
  expect(run.marks).toContain('unfinished');
  const undo = await runPetinv(['undo', run.id, '--dry-run'], { env });
  expect(undo.code, undo.stderr).toBe(0);
  expect(undo.stderr).toContain('6 already right');
  expect(undo.stderr).not.toContain('the quantity wanted');
});

function tryList(folder: string): string[] {
  try {
    return readdirSync(folder);
  } catch {
    return [];
  }
}
