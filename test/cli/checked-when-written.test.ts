import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listedQuantities, runMain, type ServedInProcess, serveInProcess, startMain } from '../helpers/main';
import { patchQuantity, temporaryDirectory } from '../helpers/serve';

/**
 * A long bulk run against a slow `petinv serve --latency`, one update at a time, while a colleague changes
 * a pet near the end of the sheet: the run's check of that pet is made when it is written, not when the
 * run began.
 */
const KEY = 'checked-when-written-key';
const PETS = 60;
let served: ServedInProcess;
let env: NodeJS.ProcessEnv;
let files: string;
beforeAll(async () => {
  served = await serveInProcess(['--in-memory', '--api-key', KEY, '--seed', String(PETS), '--latency', '30']);
  files = temporaryDirectory();
  env = {
    PETINV_CONFIG_DIR: temporaryDirectory(),
    XDG_STATE_HOME: temporaryDirectory(),
    PETINV_ENV: 'local',
    PETINV_BASE_URL: served.baseUrl,
    PETINV_API_KEY: KEY,
  };
});
afterAll(() => served.stop());

const quantities = () => listedQuantities(env);

/** Runs `set --file` of `sheet` one update at a time; once pet 10 holds `cue`, a colleague sets `petId` to `theirs`. */
async function runWithColleague(sheet: string, cue: number, petId: number, theirs: number) {
  const path = join(files, `sheet-${Date.now()}.csv`);
  writeFileSync(path, sheet);
  const args = ['set', '--file', path, '--concurrency', '1', '--pipelining', '1', '--json'];
  const run = startMain(args, { env });
  // The colleague's change comes once the run has been writing for a while (several windows' worth).
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    if ((await quantities()).get(10) === cue) break;
  }
  expect(await patchQuantity(served.baseUrl, KEY, petId, theirs)).toBe(200);
  const code = await run.exited;
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

/** The newest run in the history, as --json shows it. */
async function lastRun() {
  const runs = JSON.parse((await runMain(['history', '--json'], { env })).stdout) as {
    changes: { petId: number; before: number; after: number }[];
  }[];
  return runs[0];
}

describe('a long run checks each pet against what the service held just before its write', () => {
  it('a row with a from whose pet a colleague changed mid-run is a conflict: named, theirs kept, exit 11', async () => {
    const start = await quantities();
    // A plan: from is each pet's quantity now, to a new count; pet 58 is near the end.
    const rows = Array.from({ length: PETS }, (_, index) => {
      const petId = index + 1;
      return `${petId},${start.get(petId)},${10_000 + petId}`;
    });
    const result = await runWithColleague(`petId,from,to\n${rows.join('\n')}\n`, 10_010, 58, 7);
    expect(result.code, result.stderr).toBe(11);
    const failure = JSON.parse(result.stderr.trim().split('\n').at(-1) as string);
    expect(failure.error.message).toMatch(/1 conflict in local: pet 58 changed since/);
    expect(failure.summary).toMatchObject({ conflicts: 1, updated: PETS - 1 });
    expect(JSON.parse(result.stdout)).toContainEqual(
      expect.objectContaining({
        conflict: true,
        petId: 58,
        from: start.get(58),
        current: 7,
        quantity: 10_058,
      }),
    );
    const now = await quantities();
    expect(now.get(58)).toBe(7);
    expect(now.get(59)).toBe(10_059);
  }, 30_000);

  it('a colleague changing the next pets right before their writes: conflicts, never overwritten (serve checks at the write)', async () => {
    const start = await quantities();
    const rows = Array.from({ length: PETS }, (_, index) => {
      const petId = index + 1;
      return `${petId},${start.get(petId)},${30_000 + petId}`;
    });
    // Pet 20 is written ten updates after pet 10, well inside the second the run's last read may be old:
    // whether a read comes between or not, it is a conflict.
    const result = await runWithColleague(`petId,from,to\n${rows.join('\n')}\n`, 30_010, 20, 8);
    expect(result.code, result.stderr).toBe(11);
    expect(JSON.parse(result.stdout)).toContainEqual(
      expect.objectContaining({ conflict: true, petId: 20, current: 8, quantity: 30_020 }),
    );
    expect((await quantities()).get(20)).toBe(8);
  }, 30_000);

  it("a row without a from written right after a colleague's change: the history's before is theirs", async () => {
    const rows = Array.from({ length: PETS }, (_, index) => `${index + 1},${40_001 + index}`);
    const result = await runWithColleague(`petId,quantity\n${rows.join('\n')}\n`, 40_010, 20, 9);
    expect(result.code, result.stderr).toBe(0);
    expect((await quantities()).get(20)).toBe(40_020);
    const run = await lastRun();
    expect(run?.changes).toContainEqual({ petId: 20, before: 9, after: 40_020 });
  }, 30_000);

  it("a row without a from is written, and the history's before is the colleague's quantity", async () => {
    const rows = Array.from({ length: PETS }, (_, index) => `${index + 1},${20_001 + index}`);
    const result = await runWithColleague(`petId,quantity\n${rows.join('\n')}\n`, 20_010, 57, 5);
    expect(result.code, result.stderr).toBe(0);
    expect((await quantities()).get(57)).toBe(20_057);
    const run = await lastRun();
    expect(run?.changes).toContainEqual({ petId: 57, before: 5, after: 20_057 });
    // So undo brings the colleague's count back.
    expect((await runMain(['undo'], { env })).code).toBe(0);
    expect((await quantities()).get(57)).toBe(5);
  }, 30_000);
});
