import { spawn } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { bearer, jsonBody, request } from '../helpers/http';
import { openSocket, parseResponse, readUntilClosed } from '../helpers/raw-http';
import { cleanEnv, PETINV_BIN, runPetinv, spawnServer, temporaryDirectory } from '../helpers/serve';

/** `petinv serve` as an operator meets it: its options, keys, stderr and signals. The built CLI runs. */

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

describe('keys', () => {
  it.each([
    ['an empty --api-key', ['--api-key', ''], {}],
    ['an --api-key with a space', ['--api-key', 'two words'], {}],
    ['an --api-key with a tab', ['--api-key', 'a\tb'], {}],
    ['an --api-key with an escape character', ['--api-key', 'a\u001bb'], {}],
    ['an --api-key beside a good one', ['--api-key', 'good', '--api-key', 'é'], {}],
    ['an empty PETINV_SERVE_API_KEY', [], { PETINV_SERVE_API_KEY: '' }],
    ['a PETINV_SERVE_API_KEY with a newline', [], { PETINV_SERVE_API_KEY: 'key\n' }],
  ])('%s is a usage error at start, and the key is not echoed', async (_name, args, env) => {
    const result = await runPetinv(['serve', '--port', '0', '--in-memory', ...args], {
      env: { PETINV_CONFIG_DIR: temporaryDirectory(), ...env },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^petinv: (--api-key|PETINV_SERVE_API_KEY): a key /);
    expect(result.stderr).not.toContain('two words');
  });

  it('--api-key-file reads one key per line, skipping blank lines, CRs and the trailing newline', async () => {
    const file = join(temporaryDirectory(), 'keys');
    writeFileSync(file, 'first-key\r\n\n  \nsecond-key\n');
    const server = await spawnServer(['--in-memory', '--api-key-file', file, '--api-key', 'flag-key']);
    expect(server.ready.keySource).toBe(`--api-key and --api-key-file ${file}`);
    for (const key of ['first-key', 'second-key', 'flag-key'])
      expect((await request(`${server.baseUrl}/inventory`, { headers: bearer(key) })).status).toBe(200);
    expect((await request(`${server.baseUrl}/inventory`, { headers: bearer('') })).status).toBe(401);
    await server.stop();
  });

  it('--api-key-file: a bad line is a usage error naming the line, not the key', async () => {
    const file = join(temporaryDirectory(), 'keys');
    writeFileSync(file, 'good\nsecret with space\n');
    const result = await runPetinv(['serve', '--port', '0', '--in-memory', '--api-key-file', file]);
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toBe(
      `petinv: --api-key-file ${file}, line 2: a key holds white space, a control character or a non-ASCII character, which no client can send`,
    );
  });

  it('--api-key-file: a file with no key is a usage error', async () => {
    const file = join(temporaryDirectory(), 'keys');
    writeFileSync(file, '\n\n');
    const result = await runPetinv(['serve', '--port', '0', '--in-memory', '--api-key-file', file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('holds no key');
  });

  it.each([
    ['missing', (dir: string) => join(dir, 'absent')],
    ['a directory', (dir: string) => dir],
    [
      'unreadable',
      (dir: string) => {
        const file = join(dir, 'keys');
        writeFileSync(file, 'k\n');
        chmodSync(file, 0);
        return file;
      },
    ],
  ])('--api-key-file: a %s file is exit 3 in one line', async (kind, make) => {
    const file = make(temporaryDirectory());
    // root reads a file of mode 000 anyway; that case proves nothing there.
    if (kind === 'unreadable' && process.getuid?.() === 0) return;
    const result = await runPetinv(['serve', '--port', '0', '--in-memory', '--api-key-file', file]);
    expect(result.code).toBe(3);
    expect(result.stderr.trim()).toMatch(
      new RegExp(`^petinv: cannot read --api-key-file ${file} \\(E[A-Z]+\\)$`),
    );
  });
});

describe('binding beyond loopback', () => {
  it('warns that keys travel in clear text', async () => {
    const server = await spawnServer(['--in-memory', '--api-key', KEY, '--host', '0.0.0.0']);
    expect(server.stderr()).toContain('"event":"warning"');
    expect(server.stderr()).toContain('API keys travel in clear text over http');
    await server.stop();
  });

  it('says nothing of the kind on loopback', async () => {
    const server = await spawnServer(['--in-memory', '--api-key', KEY]);
    expect(server.stderr()).not.toContain('warning');
    await server.stop();
  });
});

describe('timeouts and the connection cap as options', () => {
  it('--headers-timeout reaches the server', async () => {
    const server = await spawnServer([
      '--in-memory',
      '--api-key',
      KEY,
      '--headers-timeout',
      '100',
      '--request-timeout',
      '200',
    ]);
    const socket = await openSocket(server.port);
    const received = readUntilClosed(socket);
    socket.write('GET /v1/inventory HTTP/1.1\r\n');
    const response = parseResponse(await received);
    expect(response.status).toBe(408);
    expect(response.json()).toMatchObject({ code: 'request_timeout', status: 408 });
    await server.stop();
    expect(server.stderr()).toContain(
      '"event":"client_error","code":"ERR_HTTP_REQUEST_TIMEOUT","status":408',
    );
  });

  it.each([
    [['--headers-timeout', '0'], '--headers-timeout 0'],
    [['--request-timeout', 'soon'], '--request-timeout soon'],
    [
      ['--headers-timeout', '5000', '--request-timeout', '1000'],
      '--headers-timeout 5000 must not exceed --request-timeout 1000',
    ],
    [['--headers-timeout', '40000'], '--headers-timeout 40000 must not exceed --request-timeout 30000'],
    [['--max-connections', '0'], '--max-connections 0'],
  ])('%j is a usage error', async (args, message) => {
    const result = await runPetinv(['serve', '--in-memory', '--api-key', KEY, ...args]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
  });
});
