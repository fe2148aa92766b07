import { spawn } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { bearer, jsonBody, request } from '../helpers/http';
import { cleanEnv, PETINV_BIN, runPetinv, spawnServer, temporaryDirectory } from '../helpers/serve';

const KEY = 'process-test-key';
const BIG = '9223372036854775807';

describe('petinv serve as a process', () => {
  it('prints a JSON readiness line, stores a generated key for the local environment, and never logs it', async () => {
    const configDir = temporaryDirectory();
    const server = await spawnServer(['--in-memory'], { PETINV_CONFIG_DIR: configDir });
    const config = JSON.parse(readFileSync(join(configDir, 'config.json'), 'utf8'));
    const key = config.environments.local.apiKey;
    expect(server.ready).toMatchObject({ event: 'listening', dataFile: null, pets: 12, apiKey: key });
    expect(server.baseUrl).toBe(`http://127.0.0.1:${server.port}/v1`);
    expect(String(server.ready.keySource)).toContain('generated');
    expect(statSync(join(configDir, 'config.json')).mode & 0o777).toBe(0o600);
    expect(statSync(configDir).mode & 0o777).toBe(0o700);

    expect((await request(`${server.baseUrl}/inventory`, { headers: bearer(key) })).status).toBe(200);
    expect((await request(`${server.baseUrl}/inventory`, { headers: bearer('wrong') })).status).toBe(401);
    expect(await server.stop()).toEqual({ code: 0, signal: null });
    const log = server.stderr().split('\n').slice(1).join('\n');
    expect(log).toContain('"method":"GET","path":"/v1/inventory","status":200');
    expect(log).toContain('"status":401');
    expect(log).not.toContain(key);

    // The next start finds the stored key rather than making a new one.
    const again = await spawnServer(['--in-memory'], { PETINV_CONFIG_DIR: configDir });
    expect(again.ready.apiKey).toBeUndefined();
    expect(String(again.ready.keySource)).toContain(join(configDir, 'config.json'));
    expect((await request(`${again.baseUrl}/inventory`, { headers: bearer(key) })).status).toBe(200);
    await again.stop();
  });

  it('without --json, prints a one-line readiness message and a plain log line per request', async () => {
    const data = join(temporaryDirectory(), 'inventory.json');
    const child = spawn(
      process.execPath,
      [PETINV_BIN, 'serve', '--port', '0', '--data', data, '--api-key', KEY],
      {
        env: { ...cleanEnv(), PETINV_CONFIG_DIR: temporaryDirectory() },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    const lines = createInterface({ input: child.stderr });
    const received: string[] = [];
    const ready = await new Promise<string>((resolve) =>
      lines.on('line', (line) => {
        received.push(line);
        if (line.includes('listening')) resolve(line);
      }),
    );
    const match =
      /^petinv serve: listening on (http:\/\/127\.0\.0\.1:\d+\/v1) · data (.*) \(12 pets, new\) · key: --api-key$/.exec(
        ready,
      );
    expect(match?.[2]).toBe(data);
    await request(`${match?.[1]}/inventory`, { headers: bearer(KEY) });
    child.kill('SIGTERM');
    await new Promise((resolve) => child.on('exit', resolve));
    expect(received.join('\n')).toMatch(/\nGET \/v1\/inventory 200 [\d.]+ms\n/);
  });

  it('takes keys from PETINV_SERVE_API_KEY and from repeated --api-key', async () => {
    const fromEnv = await spawnServer(['--in-memory'], { PETINV_SERVE_API_KEY: 'env-key' });
    expect(fromEnv.ready.keySource).toBe('PETINV_SERVE_API_KEY');
    expect((await request(`${fromEnv.baseUrl}/inventory`, { headers: bearer('env-key') })).status).toBe(200);
    await fromEnv.stop();
    const fromFlags = await spawnServer(['--in-memory', '--api-key', 'a', '--api-key', 'b']);
    expect((await request(`${fromFlags.baseUrl}/inventory`, { headers: bearer('a') })).status).toBe(200);
    expect((await request(`${fromFlags.baseUrl}/inventory`, { headers: bearer('b') })).status).toBe(200);
    await fromFlags.stop();
  });

  it(`round-trips petId ${BIG} exactly through the data file, the list and the update`, async () => {
    const data = join(temporaryDirectory(), 'inventory.json');
    writeFileSync(
      data,
      `{"format":"petinv-inventory","version":1,"items":[{"petId":${BIG},"quantity":1,"status":"pending"},{"petId":-${BIG},"quantity":2,"status":"sold"}]}`,
    );
    const server = await spawnServer(['--data', data, '--api-key', KEY]);
    const list = await request(`${server.baseUrl}/inventory`, { headers: bearer(KEY) });
    expect(list.text).toBe(
      `[{"petId":-${BIG},"quantity":2,"status":"sold"},{"petId":${BIG},"quantity":1,"status":"pending"}]`,
    );
    const updated = await request(`${server.baseUrl}/inventory/${BIG}`, jsonBody(KEY, '{"quantity":5}'));
    expect(updated.text).toBe(`{"petId":${BIG},"quantity":5,"status":"pending"}`);
    // One above the largest int64 is a different, invalid id, not a rounding of it.
    expect(
      (await request(`${server.baseUrl}/inventory/9223372036854775808`, jsonBody(KEY, '{"quantity":5}')))
        .status,
    ).toBe(400);
    expect(
      (await request(`${server.baseUrl}/inventory/9223372036854775806`, jsonBody(KEY, '{"quantity":5}')))
        .status,
    ).toBe(404);
    expect(await server.stop()).toEqual({ code: 0, signal: null });
    expect(readFileSync(data, 'utf8')).toContain(`{"petId":${BIG},"quantity":5,"status":"pending"}`);
    const restarted = await spawnServer(['--data', data, '--api-key', KEY]);
    expect((await request(`${restarted.baseUrl}/inventory`, { headers: bearer(KEY) })).text).toContain(
      `{"petId":${BIG},"quantity":5,`,
    );
    await restarted.stop();
  });

  it('acknowledges 100 concurrent durable PATCHes and keeps every one across a restart', async () => {
    const data = join(temporaryDirectory(), 'inventory.json');
    const server = await spawnServer(['--data', data, '--api-key', KEY, '--seed', '100', '--quiet']);
    const responses = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        request(`${server.baseUrl}/inventory/${i + 1}`, jsonBody(KEY, `{"quantity":${700 + i}}`)),
      ),
    );
    expect(responses.map((response) => response.status)).toEqual(Array(100).fill(200));
    server.child.kill('SIGKILL');
    await server.exited;
    const restarted = await spawnServer(['--data', data, '--api-key', KEY, '--quiet']);
    const items = (await request(`${restarted.baseUrl}/inventory`, { headers: bearer(KEY) })).json();
    expect(items.map((item: { quantity: number }) => item.quantity)).toEqual(
      Array.from({ length: 100 }, (_, i) => 700 + i),
    );
    await restarted.stop();
  });

  it('loses no acknowledged update to kill -9, and the file still loads', async () => {
    const data = join(temporaryDirectory(), 'inventory.json');
    const server = await spawnServer(['--data', data, '--api-key', KEY, '--seed', '400', '--quiet']);
    const acknowledged = new Map<number, number>();
    let killed = false;
    // Distinct pets, so every acknowledged value must survive as it is.
    const updates = Array.from({ length: 400 }, (_, i) => i + 1);
    const inFlight = updates.map(async (petId, i) => {
      await new Promise((resolve) => setTimeout(resolve, i * 0.5));
      try {
        const response = await request(
          `${server.baseUrl}/inventory/${petId}`,
          jsonBody(KEY, `{"quantity":${5000 + petId}}`),
        );
        if (response.status === 200) acknowledged.set(petId, 5000 + petId);
      } catch {
        // Connection cut by the kill: not acknowledged.
      }
      if (acknowledged.size >= 100 && !killed) {
        killed = true;
        server.child.kill('SIGKILL');
      }
    });
    await Promise.all(inFlight);
    expect(killed).toBe(true);
    expect((await server.exited).signal).toBe('SIGKILL');
    expect(acknowledged.size).toBeGreaterThanOrEqual(100);

    const restarted = await spawnServer(['--data', data, '--api-key', KEY, '--quiet']);
    const items: Array<{ petId: number; quantity: number }> = (
      await request(`${restarted.baseUrl}/inventory`, { headers: bearer(KEY) })
    ).json();
    expect(items).toHaveLength(400);
    for (const [petId, quantity] of acknowledged) {
      expect(items.find((item) => item.petId === petId)?.quantity).toBe(quantity);
    }
    await restarted.stop();
  });

  it('refuses a corrupt or invalid data file, names it, and leaves it untouched', async () => {
    for (const content of [
      '{"format":"petinv-inventory","version":1,"items":[{"petId":1,',
      '{"format":"petinv-inventory","version":1,"items":[{"petId":1,"quantity":"x","status":"sold"}]}',
    ]) {
      const data = join(temporaryDirectory(), 'inventory.json');
      writeFileSync(data, content);
      const result = await runPetinv(['serve', '--port', '0', '--data', data, '--api-key', KEY]);
      expect(result.code).toBe(3);
      expect(result.stderr).toContain(data);
      expect(result.stderr).toMatch(/not valid JSON|does not hold an inventory/);
      expect(result.stderr).not.toMatch(/\n\s+at /);
      expect(readFileSync(data, 'utf8')).toBe(content);
    }
  });

  it('refuses a second server on the same data file', async () => {
    const data = join(temporaryDirectory(), 'inventory.json');
    const first = await spawnServer(['--data', data, '--api-key', KEY]);
    const second = await runPetinv(['serve', '--port', '0', '--data', data, '--api-key', KEY]);
    expect(second.code).toBe(3);
    expect(second.stderr).toContain(
      `data file ${data} is in use by another petinv serve (pid ${first.child.pid})`,
    );
    await first.stop();
  });

  it('names a port already in use in one line', async () => {
    const first = await spawnServer(['--in-memory', '--api-key', KEY]);
    const second = await runPetinv(['serve', '--port', String(first.port), '--in-memory', '--api-key', KEY]);
    expect(second.code).toBe(3);
    expect(second.stderr.trim()).toBe(
      `petinv: port ${first.port} on 127.0.0.1 is already in use; choose another with --port (0 picks a free one)`,
    );
    await first.stop();
  });

  it.each(['SIGTERM', 'SIGINT'] as const)(
    'on %s finishes the request in flight, flushes and exits 0',
    async (signal) => {
      const data = join(temporaryDirectory(), 'inventory.json');
      const server = await spawnServer(['--data', data, '--api-key', KEY, '--latency', '1000']);
      const pending = request(`${server.baseUrl}/inventory/3`, jsonBody(KEY, '{"quantity":321}'));
      // Well inside the latency: the request has reached the server, its answer has not left.
      await new Promise((resolve) => setTimeout(resolve, 400));
      server.child.kill(signal);
      const response = await pending;
      expect(response.status).toBe(200);
      expect(await server.exited).toEqual({ code: 0, signal: null });
      expect(readFileSync(data, 'utf8')).toContain('{"petId":3,"quantity":321,');
      await expect(request(`${server.baseUrl}/inventory`, { headers: bearer(KEY) })).rejects.toThrow();
    },
  );
});

describe('fault flags', () => {
  it('--fail-rate 1 answers 503 with Retry-After, but not on /healthz', async () => {
    const server = await spawnServer(['--in-memory', '--api-key', KEY, '--fail-rate', '1']);
    const response = await request(`${server.baseUrl}/inventory`, { headers: bearer(KEY) });
    expect(response.status).toBe(503);
    expect(response.headers['retry-after']).toBe('1');
    expect(response.json()).toMatchObject({ code: 'unavailable', status: 503 });
    expect((await request(`${server.baseUrl.replace('/v1', '')}/healthz`)).status).toBe(200);
    await server.stop();
  });

  it('--fail-rate 0 never fails', async () => {
    const server = await spawnServer(['--in-memory', '--api-key', KEY, '--fail-rate', '0']);
    for (let i = 0; i < 20; i++)
      expect((await request(`${server.baseUrl}/inventory`, { headers: bearer(KEY) })).status).toBe(200);
    await server.stop();
  });

  it('--rate-limit N answers 429 with Retry-After past N requests in a second', async () => {
    const server = await spawnServer(['--in-memory', '--api-key', KEY, '--rate-limit', '3']);
    const statuses = await Promise.all(
      Array.from({ length: 8 }, () => request(`${server.baseUrl}/inventory`, { headers: bearer(KEY) })),
    );
    const limited = statuses.filter((response) => response.status === 429);
    // The burst may straddle a second boundary, so at least 8 - 2*3 are refused.
    expect(limited.length).toBeGreaterThanOrEqual(2);
    expect(Number(limited[0]?.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(limited[0]?.json()).toMatchObject({ code: 'rate_limited', status: 429 });
    await server.stop();
  });

  it('--latency delays every response', async () => {
    const server = await spawnServer(['--in-memory', '--api-key', KEY, '--latency', '300-350']);
    const started = performance.now();
    expect((await request(`${server.baseUrl}/inventory`, { headers: bearer(KEY) })).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    await server.stop();
  });

  it('--quiet writes no request lines', async () => {
    const server = await spawnServer(['--in-memory', '--api-key', KEY, '--quiet']);
    await request(`${server.baseUrl}/inventory`, { headers: bearer(KEY) });
    await server.stop();
    expect(server.stderr()).not.toContain('"method"');
  });

  it.each([
    ['--port', 'abc'],
    ['--seed', '-1'],
    ['--latency', '5-1'],
    ['--fail-rate', '2'],
    ['--rate-limit', '0'],
  ])('rejects %s %s as a usage error', async (flag, value) => {
    const result = await runPetinv(['serve', '--in-memory', flag, value]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${flag} ${value}`);
  });
});
