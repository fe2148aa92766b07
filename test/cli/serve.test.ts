import { appendFileSync, chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeCommit, JOURNAL_HEADER } from '../../src/server/journal-format';
import { bearer, jsonBody, request } from '../helpers/http';
import { runMain, serveInProcess, startMain } from '../helpers/main';
import { openSocket, parseResponse, readUntilClosed } from '../helpers/raw-http';
import { temporaryDirectory } from '../helpers/serve';

/**
 * `petinv serve` as an operator meets it, run in-process through main(argv, io): its options, keys, files,
 * readiness line and log. test/server/process.test.ts and serve-command.test.ts keep what needs a real
 * process: signals from outside, kill -9, a closed stderr pipe, a second process on the same data file.
 */

const KEY = 'process-test-key';
const BIG = '9223372036854775807';
/** A log line's time: UTC, ISO 8601, milliseconds. */
const TIME = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/;

describe('petinv serve through main', () => {
  it('prints a JSON readiness line, stores a generated key for the local environment, and never logs it', async () => {
    const configDir = temporaryDirectory();
    const server = await serveInProcess(['--in-memory'], { PETINV_CONFIG_DIR: configDir });
    const config = JSON.parse(readFileSync(join(configDir, 'config.json'), 'utf8'));
    const key = config.environments.local.apiKey;
    expect(server.ready).toMatchObject({ event: 'listening', dataFile: null, pets: 12, apiKey: key });
    expect(server.baseUrl).toBe(`http://127.0.0.1:${server.port}/v1`);
    expect(String(server.ready.keySource)).toContain('generated');
    expect(statSync(join(configDir, 'config.json')).mode & 0o777).toBe(0o600);
    expect(statSync(configDir).mode & 0o777).toBe(0o700);

    expect((await request(`${server.baseUrl}/inventory`, { headers: bearer(key) })).status).toBe(200);
    expect((await request(`${server.baseUrl}/inventory`, { headers: bearer('wrong') })).status).toBe(401);
    expect(await server.stop()).toBe(0);
    const log = server.stderr().split('\n').slice(1).join('\n');
    expect(log).toContain('"method":"GET","path":"/v1/inventory","status":200');
    expect(log).toContain('"status":401');
    expect(log).not.toContain(key);

    // The next start finds the stored key rather than making a new one.
    const again = await serveInProcess(['--in-memory'], { PETINV_CONFIG_DIR: configDir });
    expect(again.ready.apiKey).toBeUndefined();
    expect(String(again.ready.keySource)).toContain(join(configDir, 'config.json'));
    expect((await request(`${again.baseUrl}/inventory`, { headers: bearer(key) })).status).toBe(200);
    await again.stop();
  });

  it('without --json, prints a readiness line within 80 columns, details below it, and timestamped log lines', async () => {
    const data = join(temporaryDirectory(), 'inventory.json');
    const serve = startMain(['serve', '--port', '0', '--data', data, '--api-key', KEY], {
      env: { PETINV_CONFIG_DIR: temporaryDirectory() },
    });
    await serve.stderrLine('key: --api-key');
    const [ready, dataLine, keyLine] = serve.stderr().split('\n');
    const match = new RegExp(
      `^${TIME.source} petinv serve: listening on (http://127\\.0\\.0\\.1:\\d+/v1)$`,
    ).exec(ready ?? '');
    expect(match, ready).not.toBeNull();
    expect(ready?.length).toBeLessThanOrEqual(80);
    expect(dataLine).toBe(`  data: ${data} (12 pets, new)`);
    expect(keyLine).toBe('  key: --api-key');
    await request(`${match?.[1]}/inventory`, { headers: bearer(KEY) });
    serve.signals.emit('SIGTERM', 'SIGTERM');
    expect(await serve.exited).toBe(0);
    const log = serve.stderr().trimEnd().split('\n').slice(3);
    expect(log[0]).toMatch(new RegExp(`^${TIME.source} GET /v1/inventory 200 [\\d.]+ms$`));
    expect(log[1]).toMatch(
      new RegExp(`^${TIME.source} petinv serve: SIGTERM, finishing requests in flight and flushing `),
    );
  });

  it('with --json, every log line carries the time and an event', async () => {
    const server = await serveInProcess(['--in-memory', '--api-key', KEY]);
    await request(`${server.baseUrl}/inventory`, { headers: bearer(KEY) });
    await request(`${server.baseUrl}/inventory`, { headers: bearer('wrong') });
    expect(await server.stop()).toBe(0);
    const lines = server
      .stderr()
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    for (const line of lines) expect(line.time).toMatch(new RegExp(`^${TIME.source}$`));
    expect(lines.map((line) => line.event)).toEqual(['listening', 'request', 'request', 'stopping']);
    expect(lines[1]).toMatchObject({ method: 'GET', path: '/v1/inventory', status: 200 });
    expect(lines[2]).toMatchObject({ status: 401 });
  });

  it('takes keys from PETINV_SERVE_API_KEY and from repeated --api-key', async () => {
    const fromEnv = await serveInProcess(['--in-memory'], { PETINV_SERVE_API_KEY: 'env-key' });
    expect(fromEnv.ready.keySource).toBe('PETINV_SERVE_API_KEY');
    expect((await request(`${fromEnv.baseUrl}/inventory`, { headers: bearer('env-key') })).status).toBe(200);
    await fromEnv.stop();
    const fromFlags = await serveInProcess(['--in-memory', '--api-key', 'a', '--api-key', 'b']);
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
    const server = await serveInProcess(['--data', data, '--api-key', KEY]);
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
    expect(await server.stop()).toBe(0);
    expect(readFileSync(data, 'utf8')).toContain(`{"petId":${BIG},"quantity":5,"status":"pending"}`);
    const restarted = await serveInProcess(['--data', data, '--api-key', KEY]);
    expect((await request(`${restarted.baseUrl}/inventory`, { headers: bearer(KEY) })).text).toContain(
      `{"petId":${BIG},"quantity":5,`,
    );
    await restarted.stop();
  });

  it('refuses a corrupt or invalid data file, names it, and leaves it untouched', async () => {
    for (const content of [
      '{"format":"petinv-inventory","version":1,"items":[{"petId":1,',
      '{"format":"petinv-inventory","version":1,"items":[{"petId":1,"quantity":"x","status":"sold"}]}',
      // A quantity no client could list exactly (QA: serve held it, and every list then failed).
      '[{"petId":1,"quantity":9007199254740993,"status":"sold"}]',
    ]) {
      const data = join(temporaryDirectory(), 'inventory.json');
      writeFileSync(data, content);
      const result = await runMain(['serve', '--port', '0', '--data', data, '--api-key', KEY]);
      expect(result.code).toBe(3);
      expect(result.stderr).toContain(data);
      expect(result.stderr).toMatch(/not valid JSON|does not hold an inventory/);
      expect(result.stderr).not.toMatch(/\n\s+at /);
      expect(readFileSync(data, 'utf8')).toBe(content);
    }
  });

  it('names a port already in use in one line', async () => {
    const first = await serveInProcess(['--in-memory', '--api-key', KEY]);
    const second = await runMain(['serve', '--port', String(first.port), '--in-memory', '--api-key', KEY]);
    expect(second.code).toBe(3);
    expect(second.stderr.trim()).toBe(
      `petinv: port ${first.port} on 127.0.0.1 is already in use; choose another with --port (0 picks a free one)`,
    );
    await first.stop();
  });
});

describe('fault flags', () => {
  it('--fail-rate 1 answers 503 with Retry-After, but not on /healthz', async () => {
    const server = await serveInProcess(['--in-memory', '--api-key', KEY, '--fail-rate', '1']);
    const response = await request(`${server.baseUrl}/inventory`, { headers: bearer(KEY) });
    expect(response.status).toBe(503);
    expect(response.headers['retry-after']).toBe('1');
    expect(response.json()).toMatchObject({ code: 'unavailable', status: 503 });
    expect((await request(`${server.baseUrl.replace('/v1', '')}/healthz`)).status).toBe(200);
    await server.stop();
  });

  it('--fail-rate 0 never fails', async () => {
    const server = await serveInProcess(['--in-memory', '--api-key', KEY, '--fail-rate', '0']);
    for (let i = 0; i < 20; i++)
      expect((await request(`${server.baseUrl}/inventory`, { headers: bearer(KEY) })).status).toBe(200);
    await server.stop();
  });

  it('--rate-limit N answers 429 with Retry-After past N requests in a second', async () => {
    const server = await serveInProcess(['--in-memory', '--api-key', KEY, '--rate-limit', '3']);
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
    const server = await serveInProcess(['--in-memory', '--api-key', KEY, '--latency', '300-350']);
    const started = performance.now();
    expect((await request(`${server.baseUrl}/inventory`, { headers: bearer(KEY) })).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    await server.stop();
  });

  it('--quiet writes no request lines, and still tells of refused connections', async () => {
    const server = await serveInProcess([
      '--in-memory',
      '--api-key',
      KEY,
      '--quiet',
      '--max-connections-per-client',
      '1',
    ]);
    await request(`${server.baseUrl}/inventory`, { headers: bearer(KEY) });
    await request(`${server.baseUrl}/inventory`, { headers: bearer('wrong') });
    const held = await openSocket(server.port);
    const refused = await openSocket(server.port);
    expect(await readUntilClosed(refused)).toBe('');
    held.destroy();
    await server.stop();
    expect(server.stderr()).not.toContain('"method"');
    expect(server.stderr()).toContain(
      '"event":"client_connections_refused","client":"127.0.0.1","count":1,"limit":1',
    );
  });

  it.each([
    ['--port', 'abc'],
    ['--seed', '-1'],
    ['--latency', '5-1'],
    ['--fail-rate', '2'],
    ['--rate-limit', '0'],
  ])('rejects %s %s as a usage error', async (flag, value) => {
    const result = await runMain(['serve', '--in-memory', flag, value]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${flag} ${value}`);
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
    const result = await runMain(['serve', '--port', '0', '--in-memory', ...args], {
      env: { PETINV_CONFIG_DIR: temporaryDirectory(), ...env },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^petinv: (--api-key|PETINV_SERVE_API_KEY): a key /);
    expect(result.stderr).not.toContain('two words');
  });

  it('--api-key-file reads one key per line, skipping blank lines, CRs and the trailing newline', async () => {
    const file = join(temporaryDirectory(), 'keys');
    writeFileSync(file, 'first-key\r\n\n  \nsecond-key\n');
    const server = await serveInProcess(['--in-memory', '--api-key-file', file, '--api-key', 'flag-key']);
    expect(server.ready.keySource).toBe(`--api-key and --api-key-file ${file}`);
    for (const key of ['first-key', 'second-key', 'flag-key'])
      expect((await request(`${server.baseUrl}/inventory`, { headers: bearer(key) })).status).toBe(200);
    expect((await request(`${server.baseUrl}/inventory`, { headers: bearer('') })).status).toBe(401);
    await server.stop();
  });

  it('--api-key-file: a bad line is a usage error naming the line, not the key', async () => {
    const file = join(temporaryDirectory(), 'keys');
    writeFileSync(file, 'good\nsecret with space\n');
    const result = await runMain(['serve', '--port', '0', '--in-memory', '--api-key-file', file]);
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toBe(
      `petinv: --api-key-file ${file}, line 2: a key holds white space, a control character or a non-ASCII character, which no client can send (run petinv help serve)`,
    );
  });

  it('--api-key-file: a file with no key is a usage error', async () => {
    const file = join(temporaryDirectory(), 'keys');
    writeFileSync(file, '\n\n');
    const result = await runMain(['serve', '--port', '0', '--in-memory', '--api-key-file', file]);
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
    const result = await runMain(['serve', '--port', '0', '--in-memory', '--api-key-file', file]);
    expect(result.code).toBe(3);
    expect(result.stderr.trim()).toMatch(
      new RegExp(`^petinv: cannot read --api-key-file ${file} \\(E[A-Z]+\\)$`),
    );
  });
});

describe('binding beyond loopback', () => {
  it('warns that keys travel in clear text', async () => {
    const server = await serveInProcess(['--in-memory', '--api-key', KEY, '--host', '0.0.0.0']);
    expect(server.stderr()).toContain('"event":"warning"');
    expect(server.stderr()).toContain('API keys travel in clear text over http');
    await server.stop();
  });

  it('says nothing of the kind on loopback', async () => {
    const server = await serveInProcess(['--in-memory', '--api-key', KEY]);
    expect(server.stderr()).not.toContain('warning');
    await server.stop();
  });
});

describe('timeouts and the connection cap as options', () => {
  it('--headers-timeout reaches the server', async () => {
    const server = await serveInProcess([
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
    const result = await runMain(['serve', '--in-memory', '--api-key', KEY, ...args]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
  });
});

describe('a data file name from outside', () => {
  it('reaches the log with its escape sequences shown, never acted on, in text and in JSON', async () => {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is looked for
    const raw = /[\u0007\u001b\u009b]/;
    const name = join(temporaryDirectory(), 'inv\u001b]0;PWNED\u0007\u001b[2J\u009b2J.json');
    const json = await serveInProcess(['--data', name, '--api-key', KEY]);
    expect(await json.stop()).toBe(0);
    expect(json.stderr()).not.toMatch(raw);
    expect(json.ready.dataFile).toBe(name);

    const text = startMain(['serve', '--port', '0', '--data', name, '--api-key', KEY], {
      env: { PETINV_CONFIG_DIR: temporaryDirectory() },
    });
    await text.stderrLine('listening on');
    text.signals.emit('SIGTERM', 'SIGTERM');
    expect(await text.exited).toBe(0);
    expect(text.stderr()).not.toMatch(raw);
    expect(text.stderr()).toContain('inv\\x1b]0;PWNED\\x07\\x1b[2J\\x9b2J.json');
  });
});

describe('a journal cut short by a crash, or damaged', () => {
  it('keeps its torn last commit in a side file at start, cuts it, and says so', async () => {
    const dataFile = join(temporaryDirectory(), 'inventory.json');
    const first = await serveInProcess(['--data', dataFile, '--api-key', KEY, '--seed', '3']);
    expect(await first.stop()).toBe(0);
    // A commit serve never finished writing: no line end, so never acknowledged.
    const torn = '1 0badf00d [{"petId":1,"quantity":51}';
    appendFileSync(`${dataFile}.journal`, torn);
    const second = await serveInProcess(['--data', dataFile, '--api-key', KEY]);
    expect(await second.stop()).toBe(0);
    const notices = second
      .stderr()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
      .filter((entry) => entry.event === 'notice');
    expect(notices).toEqual([
      expect.objectContaining({
        message: expect.stringMatching(
          new RegExp(
            `^the journal of ${dataFile} ended in a commit a crash cut short \\(${torn.length} bytes\\); never acknowledged, it was cut from the journal and kept in ${dataFile}\\.journal\\.torn-\\d{8}T\\d{6}Z$`,
          ),
        ),
      }),
    ]);
    expect(readFileSync(`${dataFile}.journal`, 'utf8')).toBe('petinv-journal 2\n'); // Emptied: its header alone.
    const keptAt = notices[0].message.split(' kept in ')[1];
    expect(readFileSync(keptAt, 'utf8')).toBe(torn);
  });

  it('refuses a damaged journal with exit 3 and one line, and --recover starts from what is sound', async () => {
    const dataFile = join(temporaryDirectory(), 'inventory.json');
    const env = { PETINV_CONFIG_DIR: temporaryDirectory() };
    const serve = startMain(['serve', '--port', '0', '--data', dataFile, '--api-key', KEY, '--seed', '3'], {
      env,
    });
    await serve.stderrLine('listening on');
    // A clean stop folds the journal: the commits below are what a crash leaves behind.
    serve.signals.emit('SIGTERM', 'SIGTERM');
    expect(await serve.exited).toBe(0);
    const commits = [1, 2, 3].map((petId) =>
      encodeCommit(petId, [{ petId: BigInt(petId), quantity: 70 + petId }]),
    );
    const damaged = Buffer.concat([JOURNAL_HEADER, ...commits]);
    const offset = JOURNAL_HEADER.length + (commits[0]?.length ?? 0);
    damaged.write('9', damaged.indexOf('"quantity":72') + '"quantity":'.length);
    writeFileSync(`${dataFile}.journal`, damaged);
    const refused = await runMain(['serve', '--port', '0', '--data', dataFile, '--api-key', KEY], { env });
    expect(refused.code).toBe(3);
    expect(refused.stderr).toBe(
      `petinv: journal ${dataFile}.journal is damaged at byte offset ${offset} (commit 2: a checksum that does not match), and 1 complete commit (1 update) follows it: no crash leaves that, and acknowledged updates may be lost there; every file was left as it is. Keep a copy of it, then start with --recover to serve everything before the damage (the journal is moved aside, not removed)\n`,
    );
    expect(readFileSync(`${dataFile}.journal`)).toEqual(damaged);

    const recovered = await serveInProcess(['--data', dataFile, '--api-key', KEY, '--recover'], env);
    const list = (await request(`${recovered.baseUrl}/inventory`, { headers: bearer(KEY) })).json();
    expect(list.map((item: { quantity: number }) => item.quantity).slice(0, 3)).toEqual([71, 24, 11]);
    expect(await recovered.stop()).toBe(0);
    const warning = recovered
      .stderr()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
      .find((entry) => entry.event === 'warning');
    expect(warning.message).toMatch(
      new RegExp(
        `^--recover: the journal of ${dataFile} was damaged at byte offset ${offset} \\(commit 2: a checksum that does not match\\); started from everything sound before it \\(1 commit, 1 update replayed\\)\\. Not replayed: 1 complete commit \\(1 update\\) after the damage, and whatever the damaged bytes held; the damaged journal was moved, byte for byte, to ${dataFile}\\.journal\\.damaged-\\d{8}T\\d{6}Z$`,
      ),
    );
    expect(readFileSync(warning.message.split(' byte for byte, to ')[1])).toEqual(damaged);
  });
});
