import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { useInventoryServer } from '../helpers/inventory-server';
import { cleanEnv, PETINV_BIN, runPetinv, temporaryDirectory } from '../helpers/serve';

/**
 * The built bin on a spreadsheet's sheet of 2,000 rows, every one a change: a read of the inventory (and one
 * again each CHECK_WINDOW_MS the run takes) and a PATCH a row, no more (the server's own log counts them);
 * the same sheet again sends nothing.
 */
const ROWS = 2000;
const served = useInventoryServer('stock-take-bin-key', { seed: ROWS });
let env: NodeJS.ProcessEnv;
let directory: string;
beforeAll(() => {
  directory = temporaryDirectory();
  env = { ...served.env, XDG_STATE_HOME: directory };
});

describe('a stock-take sheet through the built bin', () => {
  it('a semicolon sheet with a BOM, CRLF and quoted names: one GET, a PATCH per changed row, then none', async () => {
    const rows = Array.from(
      { length: ROWS },
      (_, index) => `"${index + 1}";"note; ${index}";${100_000 + index}`,
    );
    const sheet = join(directory, 'count.csv');
    writeFileSync(sheet, `\ufeff"PetID";"Notes";"Quantity"\r\n${rows.join('\r\n')}\r\n;;\r\n`);
    const first = await runPetinv(['set', '--file', sheet], { env });
    expect(first.code, first.stderr).toBe(0);
    const gets = served.requests.filter((request) => request.startsWith('GET'));
    expect(new Set(gets)).toEqual(new Set(['GET /v1/inventory']));
    expect(served.requests.filter((request) => request.startsWith('PATCH'))).toHaveLength(ROWS);
    expect(first.stderr).toContain('petinv: note: ignoring column "Notes"');
    expect(first.stderr).toMatch(
      new RegExp(`updated ${ROWS} of ${ROWS} pets in local in [\\d.]+s; ${ROWS} changed, 0 already right`),
    );

    served.requests.length = 0;
    const again = await runPetinv(['set', '--file', sheet], { env });
    expect(again.code, again.stderr).toBe(0);
    expect(served.requests).toEqual(['GET /v1/inventory']);
    expect(again.stderr).toContain(`; 0 changed, ${ROWS} already right,`);

    const history = JSON.parse((await runPetinv(['history', '--json'], { env })).stdout);
    expect(history).toHaveLength(1);
    expect(history[0].pets).toBe(ROWS);
  });

  it('killed outright mid-run (kill -9): its plan is in the history, and undo of both runs gives every pet back', async () => {
    const own = { ...env, XDG_STATE_HOME: temporaryDirectory() };
    const quantities = async () =>
      new Map<number, number>(
        JSON.parse((await runPetinv(['list', '--json'], { env: own })).stdout).map(
          (item: { petId: number; quantity: number }) => [item.petId, item.quantity],
        ),
      );
    const start = await quantities();
    const sheet = join(directory, 'killed.csv');
    writeFileSync(
      sheet,
      `petId,quantity\n${[...start.keys()].map((petId) => `${petId},${7_000_000 + petId}`).join('\n')}\n`,
    );
    const patches = () => served.requests.filter((request) => request.startsWith('PATCH')).length;
    served.requests.length = 0;
    const child = spawn(
      process.execPath,
      [PETINV_BIN, 'set', '--file', sheet, '--concurrency', '1', '--pipelining', '1'],
      {
        env: { ...cleanEnv(), ...own },
        stdio: 'ignore',
      },
    );
    const killed = new Promise((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    await new Promise<void>((resolve) => {
      const look = setInterval(() => {
        if (patches() >= 100 || child.exitCode !== null) {
          clearInterval(look);
          child.kill('SIGKILL');
          resolve();
        }
      }, 1);
    });
    expect(await killed).toBe('SIGKILL');
    const written = patches();
    expect(written).toBeGreaterThanOrEqual(100);
    expect(written).toBeLessThan(ROWS);

    const [unfinished] = JSON.parse((await runPetinv(['history', '--json'], { env: own })).stdout);
    expect(unfinished).toMatchObject({ marks: ['unfinished'], pets: ROWS, command: `set --file ${sheet}` });
    // Applied again, the rest is sent; the pets the killed run wrote are already right.
    const rest = await runPetinv(['set', '--file', sheet], { env: own });
    expect(rest.code, rest.stderr).toBe(0);
    const undoRest = await runPetinv(['undo'], { env: own });
    expect(undoRest.code, undoRest.stderr).toBe(0);
    const undoKilled = await runPetinv(['undo', unfinished.id], { env: own });
    expect(undoKilled.code, undoKilled.stderr).toBe(0);
    expect(undoKilled.stderr).toContain(`run ${unfinished.id} did not record its end`);
    expect(await quantities()).toEqual(start);
  });
});

/** Whether a history file under `stateHome` holds `text`. */
const historyHolds = (stateHome: string, text: string) =>
  readdirSync(stateHome, { recursive: true, encoding: 'utf8' }).some(
    (name) => name.endsWith('.jsonl') && readFileSync(join(stateHome, name), 'utf8').includes(text),
  );

describe('one set through the built bin', () => {
  const slow = useInventoryServer('stock-take-slow-key', { latency: { min: 400, max: 400 } });

  it('killed outright while its update waits for the answer: in the history as unfinished, and undo gives the pet back', async () => {
    const own = { ...slow.env, XDG_STATE_HOME: temporaryDirectory() };
    const quantityOf3 = async () =>
      JSON.parse((await runPetinv(['get', '3', '--json'], { env: own })).stdout).quantity as number;
    const start = await quantityOf3();
    const child = spawn(process.execPath, [PETINV_BIN, 'set', '3', String(start + 50)], {
      env: { ...cleanEnv(), ...own },
      stdio: 'ignore',
    });
    const killed = new Promise((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    const recorded = () => historyHolds(own.XDG_STATE_HOME, 'unfinished');
    await new Promise<void>((resolve) => {
      const look = setInterval(() => {
        if (recorded() || child.exitCode !== null) {
          clearInterval(look);
          // Its update sent by then, and answered only 400 ms after it arrived.
          setTimeout(() => {
            child.kill('SIGKILL');
            resolve();
          }, 100);
        }
      }, 1);
    });
    expect(await killed).toBe('SIGKILL');
    const [unfinished] = JSON.parse((await runPetinv(['history', '--json'], { env: own })).stdout);
    expect(unfinished).toMatchObject({
      marks: ['unfinished'],
      command: `set 3 ${start + 50}`,
      changes: [{ petId: 3, before: start, after: start + 50 }],
    });
    const undo = await runPetinv(['undo', unfinished.id], { env: own });
    expect(undo.code, undo.stderr).toBe(0);
    expect(await quantityOf3()).toBe(start);
  });
  it('stopped by Ctrl-C while its update is out: recorded as interrupted and failed, not unfinished', async () => {
    const own = { ...slow.env, XDG_STATE_HOME: temporaryDirectory() };
    const child = spawn(process.execPath, [PETINV_BIN, 'set', '4', '4444'], {
      env: { ...cleanEnv(), ...own },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (chunk) => (stderr += chunk));
    const ended = new Promise((resolve) => child.on('close', (code, signal) => resolve(signal ?? code)));
    await new Promise<void>((resolve) => {
      const look = setInterval(() => {
        if (historyHolds(own.XDG_STATE_HOME, 'unfinished') || child.exitCode !== null) {
          clearInterval(look);
          child.kill('SIGINT');
          resolve();
        }
      }, 1);
    });
    expect(await ended).toBe('SIGINT');
    expect(stderr).toContain(
      "petinv: SIGINT: pet 4's update may have been applied or not; it is in the history",
    );
    const [run] = JSON.parse((await runPetinv(['history', '--json'], { env: own })).stdout);
    expect(run).toMatchObject({ command: 'set 4 4444', marks: ['interrupted', 'failed'] });
    expect(run.changes).toEqual([expect.objectContaining({ petId: 4, after: 4444 })]);
  });
});
