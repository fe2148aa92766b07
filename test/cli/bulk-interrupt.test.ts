import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { acquireLock } from '../../src/files/lock';
import { answer, useFakeServer } from '../helpers/lying-server';
import { startMain } from '../helpers/main';
import { cleanEnv, PETINV_BIN, temporaryDirectory } from '../helpers/serve';

/** A service whose every PATCH takes 40 ms, so a run of 60 updates two at a time is still going when Ctrl-C comes. */
let env: NodeJS.ProcessEnv;
let received = 0;
/** How long each PATCH takes to be answered: 40 ms, longer where a test needs updates still in flight. */
let answerAfterMs = 40;
const configDir = temporaryDirectory();
const slow = useFakeServer((req, res) => {
  // A bulk run reads the inventory once first: an empty one, so every line is sent.
  if (req.method === 'GET') return answer(200, '[]')(req, res);
  received++;
  let body = '';
  req.on('data', (chunk) => {
    body += chunk;
  });
  req.on('end', () => {
    const petId = String(req.url).split('/').pop();
    const { quantity } = JSON.parse(body);
    setTimeout(() => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(`{"petId":${petId},"quantity":${quantity},"status":"sold"}`);
    }, answerAfterMs);
  });
});
beforeAll(() => {
  env = {
    PETINV_CONFIG_DIR: configDir,
    PETINV_ENV: 'local',
    PETINV_BASE_URL: `${slow.origin}/v1`,
    PETINV_API_KEY: 'k',
  };
});

const LINES = 60;
const input = Array.from({ length: LINES }, (_, index) => `${index + 1} ${index}\n`).join('');

/** The --ndjson results, counted by kind, with the lines never sent. */
function results(stdout: string) {
  const parsed = stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  return {
    applied: parsed.filter((result) => result.ok === true).length,
    notSent: parsed.filter((result) => result.notSent === true),
    all: parsed,
  };
}

/** `petinv set -` as a process with its own history, fed the 60 lines: how it ends, and what it says. */
function startRun(flags: string[]) {
  const stateHome = temporaryDirectory('petinv-state-');
  const processEnv = { ...cleanEnv(), ...env, XDG_STATE_HOME: stateHome };
  const child = spawn(process.execPath, [PETINV_BIN, 'set', '-', ...flags], {
    env: processEnv,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    // 'close', not 'exit': the last words on stderr may still be in the pipe when the process has exited.
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  const before = received;
  child.stdin.end(input);
  return { stateHome, processEnv, child, exited, stderr: () => stderr, sent: () => received - before };
}

/** Resolves once `done()` says so, asked every 2 ms. */
const until = (done: () => boolean) =>
  new Promise<void>((resolve) => {
    const look = setInterval(() => {
      if (!done()) return;
      clearInterval(look);
      resolve();
    }, 2);
  });

describe('Ctrl-C during a bulk run', () => {
  it('stops sending, lets the updates in flight finish, lists those never sent and ends with 130', async () => {
    const run = startMain(['set', '-', '--ndjson', '--concurrency', '2', '--pipelining', '1'], {
      env,
      input,
    });
    // Once a few results are out, the user presses Ctrl-C.
    await new Promise<void>((resolve) => {
      const look = setInterval(() => {
        if (run.stdout().split('\n').length > 4) {
          clearInterval(look);
          resolve();
        }
      }, 5);
    });
    // While a signal has no listener, Node gives it back its default action: a second Ctrl-C then would end
    // petinv at once, unrecorded. From the first press on, SIGINT is never left without one.
    let bare = 0;
    let ended = false;
    run.signals.on('removeListener', (name) => {
      if (name === 'SIGINT' && run.signals.listenerCount('SIGINT') === 0 && !ended) bare++;
    });
    run.signals.emit('SIGINT', 'SIGINT');
    expect(bare).toBe(0);
    expect(run.signals.listenerCount('SIGINT')).toBeGreaterThan(0);
    const code = await run.exited;
    ended = true;
    expect(code).toBe(130);
    const { applied, notSent, all } = results(run.stdout());
    // Every line is accounted for once: applied (those in flight included), or listed as never sent.
    expect(applied + notSent.length).toBe(LINES);
    expect(notSent.length).toBeGreaterThan(LINES / 2);
    expect(notSent[0]).toEqual({
      input: applied + 1,
      ok: false,
      notSent: true,
      petId: applied + 1,
      quantity: applied,
    });
    expect(all.map((result) => result.input ?? 0).sort((a, b) => a - b)).toEqual(
      Array.from({ length: LINES }, (_, index) => index + 1),
    );
    const stderr = run.stderr();
    expect(stderr).toMatch(/^petinv: interrupted: sending no more updates, waiting for the 2 in flight/);
    expect(stderr).toContain(
      `petinv: stopped early, interrupted (Ctrl-C): updated ${applied} of ${LINES} pets in local in`,
    );
    expect(stderr).toContain(
      `; ${applied} changed, 0 already right, 0 failed, 0 conflicts, 0 lines skipped, ${notSent.length} not sent\n`,
    );
    expect(stderr).toMatch(
      new RegExp(`petinv: interrupted: ${notSent.length} updates of ${LINES} never sent to local\\n$`),
    );
    // Listening for Ctrl-C ends with the run: a later one is the process's own again.
    expect(run.signals.listenerCount('SIGINT')).toBe(0);
    expect(run.signals.listenerCount('SIGTERM')).toBe(0);
    expect(run.signals.listenerCount('SIGHUP')).toBe(0);
  });

  it('with --json: the summary says so, and the array holds the entries never sent', async () => {
    const before = received;
    const run = startMain(['--json', 'set', '-', '--concurrency', '1'], { env, input });
    // Ctrl-C once the run is sending (after its read of the inventory), however slow the machine is today.
    const sending = setInterval(() => {
      if (received - before < 2) return;
      clearInterval(sending);
      run.signals.emit('SIGINT', 'SIGINT');
    }, 5);
    expect(await run.exited).toBe(130);
    const array = JSON.parse(run.stdout());
    // One line: the error, the summary beside it.
    const [line, ...more] = run.stderr().trim().split('\n');
    expect(more).toEqual([]);
    const { summary, error } = JSON.parse(line as string);
    expect(summary).toMatchObject({ failed: 0, skipped: 0, stopped: 'interrupted' });
    expect(summary.updated + summary.notSent).toBe(LINES);
    // The rows not applied are named, so the rest can be applied again from the same input.
    expect(summary.notApplied).toHaveLength(summary.notSent);
    expect(summary.notApplied[0]).toEqual({
      input: LINES - summary.notSent + 1,
      petId: LINES - summary.notSent + 1,
    });
    expect(array.filter((result: { notSent?: boolean }) => result.notSent)).toHaveLength(summary.notSent);
    expect(error.code).toBe('interrupted');
  });

  it('a real SIGINT to the process: exit 130 and the summary', async () => {
    const child = spawn(process.execPath, [PETINV_BIN, 'set', '-', '--concurrency', '2'], {
      env: { ...cleanEnv(), ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const before = received;
    child.stdin.end(input);
    // Once a few updates went out (60 of 40 ms, two at a time, take over a second), Ctrl-C.
    const look = setInterval(() => {
      if (received - before >= 4) {
        clearInterval(look);
        child.kill('SIGINT');
      }
    }, 5);
    expect(await exited).toBe(130);
    expect(stderr).toMatch(/petinv: stopped early, interrupted \(Ctrl-C\): updated \d+ of 60 pets in local/);
    expect(stderr).toMatch(/petinv: interrupted: \d+ updates of 60 never sent to local\n$/);
  });

  /**
   * Starts `petinv set -` as a process with its own history, sends `signals` once a few updates went out,
   * and returns how it ended, with the history's runs read back by `petinv history --json`.
   */
  async function stopProcess(signals: NodeJS.Signals[]) {
    const run = startRun(['--concurrency', '2', '--pipelining', '1']);
    const { processEnv, child, exited } = run;
    // Once a few updates were answered, the next ones are held, so that some are in flight at each signal.
    const sent = (count: number) => until(() => run.sent() >= count);
    await sent(6);
    answerAfterMs = 3000;
    await sent(8);
    for (const signal of signals) {
      const said = run.stderr().length;
      child.kill(signal);
      // The next signal once petinv has said it took this one (two at once would arrive as one).
      await Promise.race([until(() => run.stderr().length !== said), exited]);
    }
    const end = await exited;
    answerAfterMs = 40;
    const history = spawnSync(process.execPath, [PETINV_BIN, 'history', '--json'], {
      env: processEnv,
      encoding: 'utf8',
    });
    const runs = JSON.parse(history.stdout) as Array<{ command: string; pets: number; marks: string[] }>;
    return { end, stderr: run.stderr(), runs, sent: run.sent() };
  }

  it('a second Ctrl-C quits at once, and what was written is in the history, for undo', async () => {
    const { end, stderr, runs, sent } = await stopProcess(['SIGINT', 'SIGINT']);
    expect(end).toEqual({ code: null, signal: 'SIGINT' });
    expect(stderr).toContain(', and the rest were not sent: apply the same input again');
    const written = Number(
      /petinv: quit at once \(SIG[A-Z]+\): (\d+) pets? written so far/.exec(stderr)?.[1],
    );
    expect(written, stderr).toBeGreaterThan(0);
    // The updates in flight reached the service (it holds them, unanswered): maybe applied, so in the
    // history too, with the quantity sent, for undo to take back.
    expect(sent).toBeGreaterThan(written);
    expect(stderr).toContain(
      `the ${sent - written} updates in flight may have been applied or not (in the history too`,
    );
    // Some may have been applied: marked failed too, as the history's marks say.
    expect(runs).toEqual([
      expect.objectContaining({ command: 'set -', pets: sent, marks: ['interrupted', 'failed'] }),
    ]);
  });

  it.each(['SIGTERM', 'SIGHUP'] as const)(
    '%s quits at once too, and what was written is in the history',
    async (signal) => {
      const { end, stderr, runs, sent } = await stopProcess([signal]);
      expect(end).toEqual({ code: null, signal });
      const written = Number(
        /petinv: quit at once \(SIG[A-Z]+\): (\d+) pets? written so far/.exec(stderr)?.[1],
      );
      expect(written).toBeGreaterThan(0);
      expect(sent).toBeGreaterThan(written);
      expect(runs).toEqual([expect.objectContaining({ command: 'set -', pets: sent })]);
    },
  );

  it('a second Ctrl-C with every update in flight names none as never sent', async () => {
    answerAfterMs = 3000;
    try {
      const { child, exited, stderr, sent } = startRun(['--concurrency', '16', '--pipelining', '4']);
      await until(() => sent() === LINES);
      child.kill('SIGINT');
      await Promise.race([until(() => stderr().includes('interrupted')), exited]);
      child.kill('SIGINT');
      expect(await exited).toEqual({ code: null, signal: 'SIGINT' });
      expect(stderr()).toContain(
        `; the ${LINES} updates in flight may have been applied or not (in the history too`,
      );
      expect(stderr()).not.toContain('the rest were not sent');
    } finally {
      answerAfterMs = 40;
    }
  });

  it('Ctrl-C, twice, or SIGTERM once every update is answered: the run records its end and reports, then ends', async () => {
    const { stateHome, processEnv, child, exited, stderr: said, sent } = startRun(['--concurrency', '4']);
    // The run's plan is in its history: another petinv (this test) then holds the history's lock, so that
    // the run's end waits for it, and the signals come while it waits: the run is over, and quitting would
    // only lose its record and its summary.
    const folder = join(stateHome, 'petinv', 'history');
    const file = () => existsSync(folder) && readdirSync(folder).find((name) => name.endsWith('.jsonl'));
    await until(() => Boolean(file()));
    const lock = await acquireLock(join(folder, `${file()}.lock`), { waitMs: 3000 });
    await until(() => sent() === LINES);
    await new Promise((resolve) => setTimeout(resolve, 100));
    for (const signal of ['SIGINT', 'SIGINT', 'SIGTERM'] as const) {
      child.kill(signal);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(child.exitCode === null && child.signalCode === null, said()).toBe(true);
    await lock.release();
    expect(await exited).toEqual({ code: 0, signal: null });
    const stderr = said();
    expect(stderr).toBe(
      `petinv: updated ${LINES} of ${LINES} pets in local in ${/ in ([\d.]+s);/.exec(stderr)?.[1]}; ${LINES} changed, 0 already right, 0 failed, 0 conflicts, 0 lines skipped\n`,
    );
    const history = spawnSync(process.execPath, [PETINV_BIN, 'history', '--json'], {
      env: processEnv,
      encoding: 'utf8',
    });
    expect(JSON.parse(history.stdout)).toEqual([
      expect.objectContaining({ command: 'set -', pets: LINES, marks: [] }),
    ]);
  });
});
