import { spawn } from 'node:child_process';
import { appendFileSync, readdirSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { bootId, processStartTime } from '../../src/files/lock';
import { useInventoryServer } from '../helpers/inventory-server';
import { runMain } from '../helpers/main';
import { cleanEnv, PETINV_BIN, temporaryDirectory } from '../helpers/serve';

/** A bare undo says which run it takes back, and passes over a colleague's run from another terminal. */
const KEY = 'undo-names-key';
const served = useInventoryServer(KEY, { seed: 20 });
let env: NodeJS.ProcessEnv;
beforeEach(() => {
  env = { ...served.env, XDG_STATE_HOME: temporaryDirectory() };
});
const petinv = (args: string[], input?: string) => runMain(args, { env, input });
const quantity = async (petId: number) =>
  (JSON.parse((await petinv(['list', '--json'])).stdout) as { petId: number; quantity: number }[]).find(
    (item) => item.petId === petId,
  )?.quantity;

/** `petinv ARGS` as a process in a session of its own, as a command typed in another terminal is. */
function inAnotherTerminal(args: string[]): Promise<number | null> {
  const child = spawn(process.execPath, [PETINV_BIN, ...args], {
    env: { ...cleanEnv(), ...env },
    detached: true,
    stdio: 'ignore',
  });
  return new Promise((resolve) => child.on('close', resolve));
}

describe('undo ID', () => {
  it('refuses an empty id, which every id begins with, even when the history holds one run (QA)', async () => {
    expect((await petinv(['set', '17', '117'])).code).toBe(0);
    const empty = await petinv(['undo', '']);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('no run "" in the history of this service');
    expect(await quantity(17)).toBe(117);
  });
});

describe('a bare undo names the run it takes back', () => {
  it('in --dry-run, in the production prompt, and in its result, as text and as JSON', async () => {
    expect((await petinv(['set', '-'], '1 101\n2 102\n')).code).toBe(0);
    const [run] = JSON.parse((await petinv(['history', '--json'])).stdout);
    const named = `run ${run.id} (set -, at ${run.at.replace('T', ' ').replace(/\.\d+Z$|Z$/, '')} UTC, 2 pets)`;
    const dry = await petinv(['undo', '--dry-run']);
    expect(dry.stderr).toContain(`petinv: undoing ${named}\n`);
    const json = await petinv(['--json', 'undo', '--dry-run']);
    expect(JSON.parse(json.stderr.split('\n')[0] as string)).toEqual({
      undo: { id: run.id, command: 'set -', at: run.at, pets: 2 },
    });
    const production = { ...env, PETINV_ENV: 'production' };
    const refused = await runMain(['undo'], { env: production, stdinTty: true, input: 'n\n' });
    expect(refused.code).toBe(10);
    expect(refused.stderr).toContain(`Undo ${named}: 2 updates in production?`);
    const done = await petinv(['undo']);
    expect(done.code, done.stderr).toBe(0);
    expect(done.stderr).toContain(`petinv: undoing ${named}\n`);
  });

  it('history marks forced and partly failed runs', async () => {
    await petinv(['set', '-', '--force'], '3 103\n');
    await petinv(['set', '-'], '4 104\n999999 1\n');
    const runs = JSON.parse((await petinv(['history', '--json'])).stdout);
    expect(runs.map((run: { marks: string[] }) => run.marks)).toEqual([['failed'], ['forced']]);
    const tsv = (await petinv(['history'])).stdout.split('\n');
    expect(tsv[0]?.split('\t').at(-1)).toBe('failed');
  });
});

describe("a colleague's run from another terminal, with the same account", () => {
  it('is passed over by a bare undo, with a notice naming it; theirs is kept', async () => {
    expect((await petinv(['set', '5', '505'])).code).toBe(0);
    expect(await inAnotherTerminal(['adjust', '6', '+4'])).toBe(0);
    const six = await quantity(6);
    const [theirs] = JSON.parse((await petinv(['history', '--json'])).stdout);
    expect(theirs.command).toBe('adjust 6 +4');
    const undone = await petinv(['undo']);
    expect(undone.code, undone.stderr).toBe(0);
    expect(undone.stderr).toContain(`passing over run ${theirs.id} (adjust 6 +4,`);
    expect(undone.stderr).toContain('undoing run');
    expect(undone.stderr).toContain('(set 5 505,');
    expect(await quantity(6)).toBe(six);
    expect(await quantity(5)).not.toBe(505);
  });

  it('when this terminal made no run, a bare undo refuses and names the newest', async () => {
    expect(await inAnotherTerminal(['adjust', '7', '-1'])).toBe(0);
    const seven = await quantity(7);
    const refused = await petinv(['undo']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      /^petinv: the newest run (\S+) \(adjust 7 -1, at .* UTC, 1 pet\) was made in another terminal, and none in this one; petinv undo \1 takes it back/,
    );
    expect(await quantity(7)).toBe(seven);
  });
});

describe('undo of a run the history no longer keeps', () => {
  it('says it was dropped by the bound, naming the oldest run kept (QA: a stock-take pushed out by colleagues’ sets)', async () => {
    expect((await petinv(['set', '-'], '4 404\n5 505\n')).code).toBe(0);
    const stockTake = (await petinv(['history'])).stdout.split('\t')[0] as string;
    // Runs begun in the same second as the stock-take (QA: an id tells its start to the second only).
    for (let run = 0; run < 99; run++) expect((await petinv(['set', '6', String(run)])).code).toBe(0);
    // The run that pushes the stock-take out says so (QA: nothing did).
    const pushing = await petinv(['set', '6', '99']);
    expect(pushing.code).toBe(0);
    expect(pushing.stderr).toContain(
      `petinv: warning: the history keeps its newest runs (100 at most, in 4 MiB): run ${stockTake} (set -, 2 pets) is dropped from it, and undo can no longer take it back`,
    );
    const dropped = await petinv(['undo', stockTake]);
    expect(dropped.code).toBe(2);
    // The oldest run kept is the first colleague's (QA: it was one begun in its second with a lower id).
    expect(dropped.stderr).toMatch(
      new RegExp(
        `^petinv: run ${stockTake} is older than every run the history of this service keeps \\(the newest 100; the oldest now run \\S+ \\(set 6 0, at .* UTC, 1 pet\\)\\): if it was made here, it was dropped, and undo cannot take it back`,
      ),
    );
    expect(await quantity(4)).toBe(404);
    // An id that never was, newer than the oldest kept, is no run at all.
    expect((await petinv(['undo', '29990101T000000-abcd'])).stderr).toContain(
      'no run "29990101T000000-abcd" in the history of this service',
    );
  });
});

describe('undo of a run that has not recorded its end', () => {
  it('is refused while the petinv running it still runs, and done once it does not (QA: a run undone mid-way)', async () => {
    expect((await petinv(['set', '-'], '3 303\n')).code).toBe(0);
    const folder = join(env.XDG_STATE_HOME as string, 'petinv', 'history');
    const file = join(folder, readdirSync(folder).find((name) => name.endsWith('.jsonl')) as string);
    const [line] = readFileSync(file, 'utf8').trim().split('\n');
    // The same run, as the start of one this test process is running (and then one a process long gone ran).
    const unfinished = (id: string, start: string | undefined) => {
      const by = { pid: process.pid, host: hostname(), start, boot: bootId() };
      appendFileSync(
        file,
        `${JSON.stringify({ ...JSON.parse(line as string), id, marks: ['unfinished'], by })}\n`,
      );
    };
    unfinished('20260101T000000-aaaa', processStartTime(process.pid));
    const refused = await petinv(['undo', '20260101T000000-aaaa']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      `run 20260101T000000-aaaa is still running (petinv, pid ${process.pid}): undo it once it has ended`,
    );
    expect(await quantity(3)).toBe(303);
    unfinished('20260101T000000-bbbb', '1');
    const done = await petinv(['undo', '20260101T000000-bbbb']);
    expect(done.code, done.stderr).toBe(0);
    expect(await quantity(3)).not.toBe(303);
  });
});
