import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LEAVE_SCREEN } from '../../src/watch/screen';
import { answer, cutShort, type FakeServer, hang, startFakeServer } from '../helpers/lying-server';
import { runMain, type ServedInProcess, type StartedMain, serveInProcess, startMain } from '../helpers/main';
import { temporaryDirectory } from '../helpers/serve';

/** `petinv list --watch` in-process against a real serve, whose request log counts the polls. */

const KEY = 'watch-key';
let served: ServedInProcess;
let env: NodeJS.ProcessEnv;
const made: string[] = [];

beforeAll(async () => {
  served = await serveInProcess(['--in-memory', '--api-key', KEY]);
  const configDir = temporaryDirectory();
  made.push(configDir);
  env = {
    PETINV_CONFIG_DIR: configDir,
    PETINV_ENV: 'local',
    PETINV_BASE_URL: served.baseUrl,
    PETINV_API_KEY: KEY,
  };
});
afterAll(async () => {
  await served.stop();
  for (const directory of made) rmSync(directory, { recursive: true, force: true });
});

const polls = () =>
  served
    .stderr()
    .split('\n')
    .filter((line) => line.includes('"path":"/v1/inventory"')).length;

async function until(check: () => boolean, what: string) {
  for (let waited = 0; !check(); waited += 20) {
    if (waited > 10_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Waits until the watcher has polled `count` more times. */
async function morePolls(count: number) {
  const target = polls() + count;
  await until(() => polls() >= target, `${count} polls`);
}

async function stopWith(watch: StartedMain, signal: 'SIGINT' | 'SIGTERM' = 'SIGINT') {
  watch.signals.emit(signal, signal);
  return watch.exited;
}

describe('petinv list --watch in a pipe', () => {
  it('prints one JSON line per change, nothing for unchanged polls, filters applied, and exits 0 on Ctrl-C', async () => {
    const watch = startMain(['list', '--watch', '--interval', '0.1', '--status', 'pending'], { env });
    await morePolls(3);
    expect(served.stderr()).toContain('"status":304');
    expect(watch.stdout()).toBe('');
    // Pet 2 is pending, pet 1 available: only the first is in the watched view.
    expect((await runMain(['set', '2', '99'], { env })).code).toBe(0);
    expect((await runMain(['set', '1', '98'], { env })).code).toBe(0);
    await until(() => watch.stdout().includes('\n'), 'an event');
    await morePolls(3);
    const events = watch
      .stdout()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(events).toEqual([{ petId: 2, from: 24, to: 99, status: 'pending', at: expect.any(String) }]);
    expect(Number.isNaN(Date.parse(events[0].at))).toBe(false);
    expect(await stopWith(watch)).toBe(0);
    expect(watch.stderr()).toBe('');
  });

  it('--initial prints the current state first', async () => {
    const watch = startMain(['list', '--watch', '--interval', '0.1', '--initial', '--limit', '2'], { env });
    await until(() => watch.stdout().split('\n').length > 2, 'the initial state');
    const lines = watch
      .stdout()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.map(({ petId, from }) => [petId, from])).toEqual([
      [1, null],
      [2, null],
    ]);
    expect(await stopWith(watch, 'SIGTERM')).toBe(0);
  });

  it('refuses --interval without --watch, and --csv with it (exit 2)', async () => {
    expect((await runMain(['list', '--interval', '1'], { env })).code).toBe(2);
    expect((await runMain(['list', '--watch', '--csv'], { env })).code).toBe(2);
    expect((await runMain(['list', '--watch', '--interval', '0'], { env })).code).toBe(2);
  });
});

describe('petinv list --watch on a terminal', () => {
  it('redraws the table in place, marks a change with the value before, and restores the screen on Ctrl-C', async () => {
    const watch = startMain(['list', '--watch', '--interval', '0.1'], { env, tty: true, columns: 100 });
    await morePolls(2);
    expect(watch.stdout().startsWith('\x1b[?1049h')).toBe(true);
    expect(watch.stdout()).toContain('checked ');
    expect(watch.stdout()).not.toContain('was ');
    expect((await runMain(['set', '3', '0'], { env })).code).toBe(0);
    await until(() => watch.stdout().includes('▼ was 11'), 'the mark of a change');
    expect((await runMain(['set', '3', '50'], { env })).code).toBe(0);
    await until(() => watch.stdout().includes('▲ was 0'), 'the mark of a change');
    // A change seen by a later poll leaves the earlier mark standing for a while.
    await morePolls(2);
    expect((await runMain(['set', '4', '1'], { env })).code).toBe(0);
    await until(() => watch.stdout().includes('▼ was 23'), 'the mark of a second change');
    const lastFrame = watch.stdout().split('\x1b[H').at(-1) ?? '';
    expect(lastFrame).toContain('▲ was 0');
    expect(await stopWith(watch)).toBe(0);
    expect(watch.stdout().endsWith(LEAVE_SCREEN)).toBe(true);
    // Every frame fits the 24 rows the test terminal has.
    const frames = watch.stdout().split('\x1b[H').slice(1);
    for (const frame of frames) expect(frame.split('\n').length).toBeLessThanOrEqual(24);
  });
});

describe('petinv list --watch before its first answer', () => {
  it('says what it waits for: in the frame on a terminal, on a terminal stderr in events mode', async () => {
    // A service that takes its time: the first answer never comes while the test looks.
    const slow = await startFakeServer(hang);
    const slowEnv = { ...env, PETINV_BASE_URL: `${slow.origin}/v1` };
    try {
      const screen = startMain(['list', '--watch'], { env: slowEnv, tty: true, columns: 100 });
      await until(() => screen.stdout().includes('waiting'), 'the first frame');
      expect(screen.stdout()).toContain('waiting for the first answer from local');
      expect(await stopWith(screen)).toBe(0);
      const events = startMain(['list', '--watch', '--ndjson'], { env: slowEnv, tty: true });
      await until(() => events.stderr().includes('waiting'), 'the notice on stderr');
      expect(events.stderr()).toBe(
        'petinv: watching local every 2s, waiting for the first answer; then a JSON line per change\n',
      );
      expect(events.stdout()).toBe('');
      expect(await stopWith(events)).toBe(0);
    } finally {
      await slow.close();
    }
  });
});

describe('petinv list --watch when the service fails', () => {
  /** A status of 0 stands for an answer cut off mid-body. */
  const CUT = 0;
  let server: FakeServer;
  let failing = false;
  let status = 503;
  let quantity = 1;
  let answered = 0;
  let failed = 0;
  let baseUrl: string;
  beforeAll(async () => {
    server = await startFakeServer((req, res) => {
      answered++;
      if (failing) failed++;
      const respond = !failing
        ? answer(200, `[{"petId":1,"quantity":${quantity},"status":"sold"}]`, { ETag: `"${quantity}"` })
        : status === CUT
          ? cutShort('[{"petId":1,')
          : answer(status, { code: 'x', message: 'down for a while', status });
      respond(req, res);
    });
    baseUrl = `${server.origin}/v1`;
  });
  afterAll(() => server.close());

  it.each([
    ['503', 503],
    ['429', 429],
    ['an answer cut off', CUT],
  ])(
    'says once that the connection is lost (%s) and once that it is back, and goes on',
    async (_name, failure) => {
      failing = false;
      status = failure;
      quantity = failure;
      const watch = startMain(['--retries', '0', 'list', '--watch', '--interval', '0.1'], {
        env: { ...env, PETINV_BASE_URL: baseUrl },
      });
      const first = answered;
      await until(() => answered > first, 'the first poll');
      failing = true;
      failed = 0;
      await watch.stderrLine('lost the connection');
      // A further failed poll (the backoff starts at the interval) is not told again; each more one
      // lengthens the backoff, and so the wait for the return, without telling more.
      await until(() => failed >= 2, 'a second failed poll');
      failing = false;
      quantity = failure + 1;
      await watch.stderrLine('is back');
      await until(() => watch.stdout().includes(`"to":${failure + 1}`), 'the change after the return');
      expect(watch.stderr().match(/lost the connection/g)).toHaveLength(1);
      expect(watch.stderr().match(/is back/g)).toHaveLength(1);
      expect(await stopWith(watch)).toBe(0);
    },
  );

  it('with --json, says so in JSON lines on stderr', async () => {
    failing = false;
    status = 503;
    quantity = 40;
    const watch = startMain(['--json', '--retries', '0', 'list', '--watch', '--interval', '0.1'], {
      env: { ...env, PETINV_BASE_URL: baseUrl },
    });
    const first = answered;
    await until(() => answered > first, 'the first poll');
    failing = true;
    await watch.stderrLine('lost the connection');
    failing = false;
    quantity = 41;
    await watch.stderrLine('is back');
    expect(await stopWith(watch)).toBe(0);
    const lines = watch
      .stderr()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines).toEqual([
      { warning: { message: expect.stringMatching(/^lost the connection to .+; still trying$/) } },
      { notice: { message: expect.stringMatching(/^the connection to .+ is back$/) } },
    ]);
  });

  it('ends with the exit code of a failure a retry cannot mend, the screen restored', async () => {
    failing = true;
    status = 401;
    const watch = startMain(['list', '--watch', '--interval', '0.1'], {
      env: { ...env, PETINV_BASE_URL: baseUrl },
      tty: true,
    });
    expect(await watch.exited).toBe(4);
    expect(watch.stdout().endsWith(LEAVE_SCREEN)).toBe(true);
    expect(watch.stderr()).toMatch(/refused the API key/);
  });
});

describe('petinv list --watch against a 304 that names another ETag', () => {
  it('takes it to speak of another list, and asks for that list whole', async () => {
    let quantity = 1;
    // Every conditional poll is a 304, with the ETag of the list as it is now: it changes with the list.
    const server = await startFakeServer((req, res) => {
      const etag = `"${quantity}"`;
      if (req.headers['if-none-match']) res.writeHead(304, { ETag: etag }).end();
      else answer(200, `[{"petId":1,"quantity":${quantity},"status":"sold"}]`, { ETag: etag })(req, res);
    });
    try {
      const baseUrl = `${server.origin}/v1`;
      const watch = startMain(['list', '--watch', '--interval', '0.1', '--initial'], {
        env: { ...env, PETINV_BASE_URL: baseUrl },
      });
      await until(() => watch.stdout().includes('"to":1'), 'the initial state');
      quantity = 2;
      await until(() => watch.stdout().includes('"from":1,"to":2'), 'the change');
      expect(await stopWith(watch)).toBe(0);
    } finally {
      await server.close();
    }
  });
});
