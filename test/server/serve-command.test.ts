import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { bearer, jsonBody, request } from '../helpers/http';
import { cleanEnv, PETINV_BIN, spawnServer, temporaryDirectory } from '../helpers/serve';

/**
 * `petinv serve` as a process: its stderr pipe and the signals it gets from outside. The built CLI runs;
 * its options, keys and log run in-process in test/cli/serve.test.ts.
 */

const KEY = 'operator-key';

describe('a closed stderr', () => {
  it('never stops the server: logging stops, answers go on', async () => {
    const child = spawn(
      process.execPath,
      [PETINV_BIN, 'serve', '--json', '--port', '0', '--in-memory', '--api-key', KEY],
      {
        env: { ...cleanEnv(), PETINV_CONFIG_DIR: temporaryDirectory() },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const lines = createInterface({ input: child.stderr });
    const ready = await new Promise<{ baseUrl: string }>((resolve) =>
      lines.once('line', (line) => resolve(JSON.parse(line))),
    );
    // As `petinv serve 2>&1 | head -1` does: the reader goes after the first line.
    lines.close();
    child.stderr.destroy();
    for (let i = 0; i < 30; i++) {
      const response = await request(
        `${ready.baseUrl}/inventory/${(i % 12) + 1}`,
        jsonBody(KEY, `{"quantity":${i}}`),
      );
      expect(response.status).toBe(200);
    }
    expect(child.exitCode).toBeNull();
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});

describe('signals', () => {
  it('SIGINT after SIGTERM cuts the requests in flight, still writes the data, and exits 10', async () => {
    const data = join(temporaryDirectory(), 'inventory.json');
    const server = await spawnServer(['--data', data, '--api-key', KEY, '--latency', '1000']);
    // An update acknowledged before the stop: it must be in the data file.
    const slowPatch = request(`${server.baseUrl}/inventory/4`, jsonBody(KEY, '{"quantity":404}'));
    const acknowledged = await slowPatch;
    expect(acknowledged.status).toBe(200);
    const inFlight = request(`${server.baseUrl}/inventory`, { headers: bearer(KEY) }).catch((error) => error);
    // Well inside the latency: the request has reached the server, its answer has not left.
    await new Promise((resolve) => setTimeout(resolve, 400));
    server.child.kill('SIGTERM');
    await expect.poll(() => server.stderr()).toContain('"event":"stopping"');
    server.child.kill('SIGINT');
    expect(await server.exited).toEqual({ code: 10, signal: null });
    expect(await inFlight).toBeInstanceOf(Error);
    expect(readFileSync(data, 'utf8')).toContain('{"petId":4,"quantity":404,');
  });
});
