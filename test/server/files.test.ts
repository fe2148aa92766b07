import { type ChildProcess, spawn } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { lockDataFile } from '../../src/server/data-claim';
import { ServeError } from '../../src/server/errors';
import { encodeCommit, JOURNAL_HEADER } from '../../src/server/journal-format';
import { type RunningServer, startInventoryServer } from '../../src/server/start';
import { bearer, jsonBody, request } from '../helpers/http';
import { runMain } from '../helpers/main';
import { spawnServer, temporaryDirectory } from '../helpers/serve';

const KEY = 'files-test-key';
const running: RunningServer[] = [];
const children: ChildProcess[] = [];

afterEach(async () => {
  await Promise.allSettled(running.splice(0).map((server) => server.close()));
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

async function start(options: Parameters<typeof startInventoryServer>[0]): Promise<RunningServer> {
  const server = await startInventoryServer({ port: 0, ...options });
  running.push(server);
  return server;
}

const patch = (server: RunningServer, petId: number | string, quantity: number) =>
  request(`${server.baseUrl}/inventory/${petId}`, jsonBody(KEY, `{"quantity":${quantity}}`));

/** A live process that is not petinv: its pid stands in for a recycled one. */
function unrelatedProcess(): number {
  const child = spawn('sleep', ['60'], { stdio: 'ignore' });
  children.push(child);
  return child.pid ?? 0;
}

describe('symlinks planted in the data directory', () => {
  it('never writes through a symlink at the journal name', async () => {
    const directory = temporaryDirectory();
    const victim = join(directory, 'victim.txt');
    writeFileSync(victim, 'precious\n');
    const path = join(directory, 'inventory.json');
    symlinkSync(victim, `${path}.journal`);
    const failure = await start({ apiKeys: [KEY], dataFile: path }).catch((error: unknown) => error);
    // A ServeError is what `petinv serve` turns into its one-line message and exit code 3.
    expect(failure).toBeInstanceOf(ServeError);
    expect((failure as ServeError).message).toMatch(/journal .* symbolic link/);
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
  });

  it('writes snapshots to fresh, unpredictable names, never through a planted link', async () => {
    const directory = temporaryDirectory();
    const victim = join(directory, 'victim.txt');
    writeFileSync(victim, 'precious\n');
    const path = join(directory, 'inventory.json');
    for (const name of ['inventory.json.tmp', '.inventory.json.tmp', 'inventory.json.new'])
      symlinkSync(victim, join(directory, name));
    const server = await start({ apiKeys: [KEY], dataFile: path });
    await patch(server, 1, 5);
    await server.close();
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(readFileSync(path, 'utf8')).toContain('{"petId":1,"quantity":5,');
    expect(readdirSync(directory).filter((name) => name.endsWith('.tmp'))).toEqual([
      '.inventory.json.tmp',
      'inventory.json.tmp',
    ]);
  });

  it('writes a data file given as a symlink through to its target, and locks the target once', async () => {
    const directory = temporaryDirectory();
    mkdirSync(join(directory, 'real'));
    const target = join(directory, 'real', 'inventory.json');
    const link = join(directory, 'link.json');
    const first = await start({ apiKeys: [KEY], dataFile: target });
    await first.close();
    symlinkSync(target, link);

    const server = await start({ apiKeys: [KEY], dataFile: link });
    expect(server.dataFile).toBe(target);
    await expect(start({ apiKeys: [KEY], dataFile: target })).rejects.toThrow(
      /in use by another petinv serve/,
    );
    await patch(server, 2, 42);
    await server.close();
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(target, 'utf8')).toContain('{"petId":2,"quantity":42,');
  });

  it('names the host of a lock taken on another machine, and the lock file to remove if that serve is gone', async () => {
    const directory = temporaryDirectory();
    const dataFile = join(directory, 'inventory.json');
    writeFileSync(`${dataFile}.lock`, '4242\nhost=elsewhere.example\nstart=1\n');
    const refused = start({ apiKeys: [KEY], dataFile });
    await expect(refused).rejects.toThrow(/\(pid 4242 on host elsewhere\.example\)/);
    await expect(refused).rejects.toThrow(`remove ${dataFile}.lock`);
  });

  it('refuses a data file that is a dangling symlink, naming it', async () => {
    const directory = temporaryDirectory();
    const link = join(directory, 'inventory.json');
    symlinkSync(join(directory, 'missing.json'), link);
    await expect(start({ apiKeys: [KEY], dataFile: link })).rejects.toThrow(
      /symbolic link to .*does not exist/,
    );
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
  });
});

describe('the data file lock', () => {
  it('exists only with its owner recorded: pid, start time and boot', async () => {
    const path = join(temporaryDirectory(), 'inventory.json');
    const unlock = (await lockDataFile(path)).release;
    const [pid, ...rest] = readFileSync(`${path}.lock`, 'utf8').trim().split('\n');
    expect(Number(pid)).toBe(process.pid);
    expect(rest).toEqual([
      expect.stringMatching(/^host=.+$/),
      expect.stringMatching(/^start=\d+$/),
      expect.stringMatching(/^boot=[\w-]+$/),
    ]);
    await unlock();
    expect(existsSync(`${path}.lock`)).toBe(false);
  });

  it('takes over a lock whose pid now belongs to an unrelated live process', async () => {
    const path = join(temporaryDirectory(), 'inventory.json');
    const pid = unrelatedProcess();
    writeFileSync(`${path}.lock`, `${pid}\nstart=1\n`);
    const unlock = (await lockDataFile(path)).release;
    expect(readFileSync(`${path}.lock`, 'utf8').split('\n')[0]).toBe(String(process.pid));
    await unlock();
    // An older petinv wrote the pid alone: a live process that is not petinv does not hold it either.
    writeFileSync(`${path}.lock`, `${unrelatedProcess()}\n`);
    await (await lockDataFile(path)).release();
  });

  it('lets exactly one of several starts take over a stale lock', async () => {
    const directory = temporaryDirectory();
    const data = join(directory, 'inventory.json');
    await (await start({ apiKeys: [KEY], dataFile: data })).close();
    writeFileSync(`${data}.lock`, `${unrelatedProcess()}\nstart=1\n`);
    const results = await Promise.allSettled(
      Array.from({ length: 4 }, () => spawnServer(['--data', data, '--api-key', KEY, '--quiet'])),
    );
    const started = results.filter((result) => result.status === 'fulfilled');
    // Stopped by afterEach even when an expectation below fails.
    for (const result of started) children.push(result.value.child);
    expect(started).toHaveLength(1);
    for (const result of results)
      if (result.status === 'rejected') expect(String(result.reason)).toMatch(/exited with 3[\s\S]*in use/);
    await (started[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof spawnServer>>>).value.stop();
  });
});

describe('fixtures for testing scripts', () => {
  it('--data FILE --in-memory serves the file and never writes it', async () => {
    const directory = temporaryDirectory();
    const path = join(directory, 'fixture.json');
    await (await start({ apiKeys: [KEY], dataFile: path, seed: 3 })).close();
    const pristine = readFileSync(path);
    const server = await start({ apiKeys: [KEY], dataFile: path, inMemory: true });
    expect(server.readOnly).toBe(true);
    expect((await patch(server, 1, 99)).status).toBe(200);
    expect((await request(`${server.baseUrl}/inventory`, { headers: bearer(KEY) })).text).toContain(
      '{"petId":1,"quantity":99,',
    );
    await server.close();
    expect(readFileSync(path)).toEqual(pristine);
    expect(readdirSync(directory)).toEqual(['fixture.json', 'fixture.json.journal']);
    await expect(
      start({ apiKeys: [KEY], dataFile: join(directory, 'absent.json'), inMemory: true }),
    ).rejects.toThrow(/does not exist/);
  });

  it('--data FILE --in-memory --recover serves what is sound before damage and touches no file', async () => {
    const directory = temporaryDirectory();
    const path = join(directory, 'fixture.json');
    await (await start({ apiKeys: [KEY], dataFile: path, seed: 3 })).close();
    const journal = Buffer.concat([
      JOURNAL_HEADER,
      encodeCommit(1, [{ petId: 1n, quantity: 91 }]),
      Buffer.from(
        encodeCommit(2, [{ petId: 2n, quantity: 92 }])
          .toString()
          .replace('92', '93'),
      ),
      encodeCommit(3, [{ petId: 3n, quantity: 93 }]),
    ]);
    writeFileSync(`${path}.journal`, journal);
    const pristine = readFileSync(path);
    await expect(start({ apiKeys: [KEY], dataFile: path, inMemory: true })).rejects.toThrow(
      /is damaged at byte offset/,
    );
    const server = await start({ apiKeys: [KEY], dataFile: path, inMemory: true, recover: true });
    expect(server.journal.recovered).toMatchObject({ commitsReplayed: 1, commitsLost: 1 });
    expect(server.journal.recovered?.keptAt).toBeUndefined();
    const list = (await request(`${server.baseUrl}/inventory`, { headers: bearer(KEY) })).json();
    expect(list.map((item: { quantity: number }) => item.quantity)).toEqual([91, 24, 11]);
    await server.close();
    expect(readFileSync(path)).toEqual(pristine);
    expect(readFileSync(`${path}.journal`)).toEqual(journal);
    expect(readdirSync(directory)).toEqual(['fixture.json', 'fixture.json.journal']);
  });

  it('loads a plain JSON array, int64 petIds exact, and rewrites it in its own format only when it saves', async () => {
    const directory = temporaryDirectory();
    const path = join(directory, 'list.json');
    const array =
      '[{"petId":9223372036854775807,"quantity":1,"status":"sold"},{"petId":2,"quantity":3,"status":"available"}]\n';
    writeFileSync(path, array);
    const untouched = await start({ apiKeys: [KEY], dataFile: path });
    expect(untouched.dataFormat).toBe('array');
    await untouched.close();
    expect(readFileSync(path, 'utf8')).toBe(array);

    const server = await start({ apiKeys: [KEY], dataFile: path });
    expect((await patch(server, '9223372036854775807', 8)).text).toBe(
      '{"petId":9223372036854775807,"quantity":8,"status":"sold"}',
    );
    await server.close();
    const saved = readFileSync(path, 'utf8');
    expect(saved).toMatch(/^\{"format":"petinv-inventory","version":2,"crc32":"[0-9a-f]{8}","items":\[/);
    expect(saved).toContain('{"petId":9223372036854775807,"quantity":8,"status":"sold"}');
  });

  it('says at start that it will rewrite a plain array', async () => {
    const path = join(temporaryDirectory(), 'list.json');
    writeFileSync(path, '[{"petId":1,"quantity":1,"status":"sold"}]');
    const server = await spawnServer(['--data', path, '--api-key', KEY]);
    // After the readiness line, which comes first.
    await expect.poll(() => server.stderr()).toContain('"event":"notice"');
    expect(server.stderr()).toContain('plain JSON array');
    await server.stop();
  });
});

describe('requests pipelined on one connection', () => {
  const patchText = (quantity: number) =>
    `PATCH /v1/inventory/3 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: application/json\r\nContent-Length: ${`{"quantity":${quantity}}`.length}\r\n\r\n{"quantity":${quantity}}`;
  const getText = (close = false) =>
    `GET /v1/inventory HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\n${close ? 'Connection: close\r\n' : ''}\r\n`;

  /** Sends every request in one write, as a pipelining client does (no half-close), and splits the answers. */
  async function pipeline(port: number, requests: string): Promise<string[]> {
    const socket = connect(port, '127.0.0.1');
    socket.write(requests);
    let raw = '';
    for await (const chunk of socket) raw += chunk;
    return raw
      .split('HTTP/1.1 ')
      .slice(1)
      .map((response) => response.slice(response.indexOf('\r\n\r\n') + 4));
  }

  it('are handled in order: PATCH 11, 22, 33 then GET answer 11, 22, 33 and a list showing 33', async () => {
    const server = await start({ apiKeys: [KEY], dataFile: join(temporaryDirectory(), 'inventory.json') });
    const bodies = await pipeline(
      server.port,
      `${patchText(11)}${patchText(22)}${patchText(33)}${getText(true)}`,
    );
    expect(bodies.slice(0, 3).map((body) => JSON.parse(body).quantity)).toEqual([11, 22, 33]);
    expect(bodies[3]).toContain('{"petId":3,"quantity":33,');
  });

  it('keep their order when reads answered at once sit between writes', async () => {
    const server = await start({ apiKeys: [KEY], dataFile: join(temporaryDirectory(), 'inventory.json') });
    const bodies = await pipeline(
      server.port,
      `${patchText(11)}${getText()}${getText()}${patchText(22)}${getText(true)}`,
    );
    expect(bodies).toHaveLength(5);
    expect(JSON.parse(bodies[0] ?? '').quantity).toBe(11);
    expect(bodies[1]).toContain('{"petId":3,"quantity":11,');
    expect(bodies[2]).toContain('{"petId":3,"quantity":11,');
    expect(JSON.parse(bodies[3] ?? '').quantity).toBe(22);
    expect(bodies[4]).toContain('{"petId":3,"quantity":22,');
  });
});

describe('file-system failures at start', () => {
  it('are one-line errors with exit code 3', async () => {
    const directory = temporaryDirectory();
    writeFileSync(join(directory, 'plain-file'), '');
    for (const data of [join(directory, 'plain-file', 'inventory.json'), '/proc/petinv/inventory.json']) {
      const result = await runMain(['serve', '--port', '0', '--api-key', KEY, '--data', data], {
        env: { PETINV_CONFIG_DIR: temporaryDirectory() },
      });
      expect(result.code).toBe(3);
      expect(result.stderr).toMatch(/^petinv: cannot (use|create the directory of) data file .*: .+\n$/);
      expect(result.stderr).not.toContain('unexpected');
    }
  });
});
