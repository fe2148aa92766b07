import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export const PETINV_BIN = join(import.meta.dirname, '../../bin/petinv.js');

/** The test runner's environment without any PETINV_ setting of the person running it. */
export function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('PETINV_')));
}

export function temporaryDirectory(prefix = 'petinv-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface SpawnedServer {
  baseUrl: string;
  port: number;
  ready: Record<string, unknown>;
  child: ChildProcess;
  /** Everything the server wrote to stderr so far. */
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Spawns the built `petinv serve --json --port 0` and waits for its readiness line. */
export async function spawnServer(args: string[], env: NodeJS.ProcessEnv = {}): Promise<SpawnedServer> {
  const child = spawn(process.execPath, [PETINV_BIN, 'serve', '--json', '--port', '0', ...args], {
    env: { ...cleanEnv(), PETINV_CONFIG_DIR: temporaryDirectory('petinv-config-'), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const lines = createInterface({ input: child.stderr as NodeJS.ReadableStream });
  const ready = await new Promise<Record<string, unknown>>((resolve, reject) => {
    lines.on('line', (line) => {
      output += `${line}\n`;
      if (line.includes('"event":"listening"')) resolve(JSON.parse(line));
    });
    void exited.then(({ code }) =>
      reject(new Error(`petinv serve exited with ${code} before it was ready:\n${output}`)),
    );
  });
  return {
    baseUrl: String(ready.baseUrl),
    port: Number(ready.port),
    ready,
    child,
    stderr: () => output,
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
