import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { useFakeServer } from '../helpers/lying-server';
import { runMain, type ServedInProcess, serveInProcess } from '../helpers/main';
import { temporaryDirectory } from '../helpers/serve';

/** Conditional lists end to end: a real petinv serve, whose own request log shows what each command asked. */

const KEY = 'cache-key';
let served: ServedInProcess;
let env: NodeJS.ProcessEnv;
let cacheDir: string;
const made: string[] = [];

beforeAll(async () => {
  served = await serveInProcess(['--in-memory', '--api-key', KEY]);
});
afterAll(async () => {
  await served.stop();
  for (const directory of made) rmSync(directory, { recursive: true, force: true });
});
afterEach(() => rmSync(cacheDir, { recursive: true, force: true }));

function freshEnv(baseUrl: string) {
  const configDir = temporaryDirectory();
  cacheDir = temporaryDirectory('petinv-cache-');
  made.push(configDir);
  env = {
    PETINV_CONFIG_DIR: configDir,
    PETINV_CACHE_DIR: cacheDir,
    PETINV_ENV: 'local',
    PETINV_BASE_URL: baseUrl,
    PETINV_API_KEY: KEY,
  };
}

/** The statuses serve logged for GET /v1/inventory since `from` log lines. */
function listStatuses(from: number): number[] {
  return served
    .stderr()
    .split('\n')
    .slice(from)
    .filter((line) => line.includes('"path":"/v1/inventory"') && line.includes('"method":"GET"'))
    .map((line) => JSON.parse(line).status);
}
const logLength = () => served.stderr().split('\n').length - 1;

describe('conditional lists against petinv serve', () => {
  it('answers the second list with a 304 and the same output, and sees a change made in between', async () => {
    freshEnv(served.baseUrl);
    const start = logLength();
    const first = await runMain(['list'], { env });
    const second = await runMain(['list'], { env });
    expect(first.code).toBe(0);
    expect(second).toEqual(first);
    expect(listStatuses(start)).toEqual([200, 304]);

    expect((await runMain(['set', '3', '777'], { env })).code).toBe(0);
    const third = await runMain(['list', '--json'], { env });
    expect(third.stdout).toContain('{"petId":3,"quantity":777,');
    const fourth = await runMain(['list', '--json'], { env });
    expect(fourth.stdout).toBe(third.stdout);
    // set reads the pet's quantity before it writes (for the history): a 304 too.
    expect(listStatuses(start)).toEqual([200, 304, 304, 200, 304]);
  });

  it('revalidates for adjust and dry runs too, and --no-cache asks in full without touching the cache', async () => {
    freshEnv(served.baseUrl);
    const start = logLength();
    await runMain(['list'], { env });
    expect((await runMain(['adjust', '4', '+1', '--dry-run'], { env })).code).toBe(0);
    expect((await runMain(['set', '4', '5', '--dry-run'], { env })).code).toBe(0);
    expect((await runMain(['summary', '--json'], { env })).code).toBe(0);
    const cached = readdirSync(cacheDir).map((name) => readFileSync(join(cacheDir, name), 'utf8'));
    expect((await runMain(['--no-cache', 'list'], { env })).code).toBe(0);
    expect(listStatuses(start)).toEqual([200, 304, 304, 304, 200]);
    expect(readdirSync(cacheDir).map((name) => readFileSync(join(cacheDir, name), 'utf8'))).toEqual(cached);
    expect(cached.join()).not.toContain(KEY);
  });

  it('replaces a corrupt cache without a word, and never shows a cached list the service did not confirm', async () => {
    freshEnv(served.baseUrl);
    const start = logLength();
    const first = await runMain(['list'], { env });
    const [name] = readdirSync(cacheDir);
    writeFileSync(join(cacheDir, String(name)), 'not a cache', { mode: 0o600 });
    expect(await runMain(['list'], { env })).toEqual(first);
    expect(await runMain(['list'], { env })).toEqual(first);
    expect(listStatuses(start)).toEqual([200, 200, 304]);
  });
});

describe('a service without ETags, or one that answers 304 unasked', () => {
  const seen: IncomingHttpHeaders[] = [];
  let answer: (headers: IncomingHttpHeaders) => {
    status: number;
    body: string;
    etag?: string;
  } = () => ({
    status: 200,
    body: '[{"petId":9,"quantity":1,"status":"sold"}]',
  });
  const server = useFakeServer((req, res) => {
    seen.push(req.headers);
    const { status, body, etag } = answer(req.headers);
    res.writeHead(status, { 'Content-Type': 'application/json', ...(etag && { ETag: etag }) }).end(body);
  });

  it('works exactly as before: every list in full, nothing sent conditionally, nothing kept', async () => {
    freshEnv(`${server.origin}/v1`);
    seen.length = 0;
    for (let i = 0; i < 2; i++)
      expect(await runMain(['list'], { env })).toEqual({ code: 0, stdout: '9\tsold\t1\n', stderr: '' });
    expect(seen.map((headers) => headers['if-none-match'])).toEqual([undefined, undefined]);
    expect(readdirSync(cacheDir)).toEqual([]);
  });

  it('refuses a 304 to a request that was not conditional (exit 8)', async () => {
    freshEnv(`${server.origin}/v1`);
    answer = () => ({ status: 304, body: '' });
    const result = await runMain(['list'], { env });
    expect(result.code).toBe(8);
    expect(result.stderr).toMatch(/304 Not Modified to a request that was not conditional/);
  });

  it('never shows a kept list for a 304 that names another ETag: it asks again for the whole list', async () => {
    freshEnv(`${server.origin}/v1`);
    const kept = '[{"petId":9,"quantity":1,"status":"sold"}]';
    const current = '[{"petId":9,"quantity":5,"status":"sold"}]';
    answer = () => ({ status: 200, body: kept, etag: '"one"' });
    expect((await runMain(['list'], { env })).stdout).toBe('9\tsold\t1\n');
    seen.length = 0;
    // A 304 about another list (its ETag is not the one asked about), and that list to an unconditional GET.
    answer = (headers) =>
      headers['if-none-match']
        ? { status: 304, body: '', etag: '"two"' }
        : { status: 200, body: current, etag: '"two"' };
    expect(await runMain(['list'], { env })).toEqual({ code: 0, stdout: '9\tsold\t5\n', stderr: '' });
    expect(seen.map((headers) => headers['if-none-match'])).toEqual(['"one"', undefined]);
    // The same tag, weak or not, confirms the list kept.
    seen.length = 0;
    answer = () => ({ status: 304, body: '', etag: 'W/"two"' });
    expect(await runMain(['list'], { env })).toEqual({ code: 0, stdout: '9\tsold\t5\n', stderr: '' });
    expect(seen.map((headers) => headers['if-none-match'])).toEqual(['"two"']);
  });
});
