import { type ChildProcess, spawn } from 'node:child_process';
import { request as undiciRequest } from 'undici';
import {
  PETINV_BIN,
  type ProcessEnd,
  spawnReadyServer,
  temporaryDirectory,
} from '../../scripts/serve-process.mjs';

export { closedPort, PETINV_BIN, temporaryDirectory } from '../../scripts/serve-process.mjs';

/** The test runner's environment without any PETINV_ setting of the person running it. */
export function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('PETINV_')));
}

export interface SpawnedServer {
  baseUrl: string;
  port: number;
  ready: Record<string, unknown>;
  child: ChildProcess;
  /** Everything the server wrote to stderr so far. */
  stderr: () => string;
  exited: Promise<ProcessEnd>;
  stop(signal?: NodeJS.Signals): Promise<ProcessEnd>;
}

/** Spawns the built `petinv serve --json --port 0` and waits for its readiness line. */
export async function spawnServer(args: string[], env: NodeJS.ProcessEnv = {}): Promise<SpawnedServer> {
  const started = await spawnReadyServer([PETINV_BIN, 'serve', '--json', '--port', '0', ...args], {
    env: { ...cleanEnv(), PETINV_CONFIG_DIR: temporaryDirectory('petinv-config-'), ...env },
  });
  const { child, ready, exited } = started;
  return {
    baseUrl: String(ready.baseUrl),
    port: Number(ready.port),
    ready,
    child,
    stderr: started.output,
    exited,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Runs the built CLI to completion. */
export function runPetinv(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; input?: string } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [PETINV_BIN, ...args], {
      env: { ...cleanEnv(), NO_COLOR: undefined, FORCE_COLOR: undefined, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    // A command may rightly stop reading before all the input is written (login past its key limit).
    child.stdin.on('error', () => {});
    child.stdin.end(options.input ?? '');
  });
}

/**
 * One PATCH setting `petId` to `quantity`, over undici's request API and kept-alive connections (thousands
 * of updates: fetch's own work per request was most of a burst test's CPU). Its status, or undefined when
 * the server is gone and the update's outcome stays unknown.
 */
export async function patchQuantity(
  baseUrl: string,
  key: string,
  petId: number,
  quantity: number,
): Promise<number | undefined> {
  try {
    const response = await undiciRequest(`${baseUrl}/inventory/${petId}`, {
      method: 'PATCH',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: `{"quantity":${quantity}}`,
    });
    await response.body.dump();
    return response.statusCode;
  } catch {
    return undefined;
  }
}
