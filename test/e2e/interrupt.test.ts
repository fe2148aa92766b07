import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, PETINV_BIN, temporaryDirectory } from '../helpers/serve';

/** Ctrl-C is exit 130: a command waiting on the service dies of SIGINT, which a shell shows as 130. */

let directory: string;
const arrived: Array<(request: IncomingMessage) => void> = [];
// A service that takes every request and never answers.
const silent = createServer((request) => arrived.shift()?.(request));

beforeAll(async () => {
  directory = temporaryDirectory('petinv-interrupt-');
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  silent.closeAllConnections();
  await new Promise((resolve) => silent.close(resolve));
});

describe('Ctrl-C', () => {
  it('during a request ends petinv by SIGINT (status 130 in a shell), with nothing on stdout', async () => {
    const { port } = silent.address() as { port: number };
    const child = spawn(process.execPath, [PETINV_BIN, 'list'], {
      env: {
        ...cleanEnv(),
        PETINV_CONFIG_DIR: directory,
        PETINV_ENV: 'local',
        PETINV_BASE_URL: `http://127.0.0.1:${port}/v1`,
        PETINV_API_KEY: 'interrupt-key',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
    await new Promise((resolve) => arrived.push(resolve));
    child.kill('SIGINT');
    expect(await exited).toEqual({ code: null, signal: 'SIGINT' });
    expect(stdout).toBe('');
  });
});
