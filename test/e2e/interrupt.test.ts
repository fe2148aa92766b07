import { spawn } from 'node:child_process';
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { useFakeServer } from '../helpers/lying-server';
import { cleanEnv, PETINV_BIN, temporaryDirectory } from '../helpers/serve';

/** Ctrl-C is exit 130: a command waiting on the service dies of SIGINT, which a shell shows as 130. */

const arrived: Array<(request: IncomingMessage) => void> = [];
// A service that takes every request and never answers.
const silent = useFakeServer((request) => arrived.shift()?.(request));

describe('Ctrl-C', () => {
  it('during a request ends petinv by SIGINT (status 130 in a shell), with nothing on stdout', async () => {
    const { port } = silent;
    const child = spawn(process.execPath, [PETINV_BIN, 'list'], {
      env: {
        ...cleanEnv(),
        PETINV_CONFIG_DIR: temporaryDirectory(),
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
