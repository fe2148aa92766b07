import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { parseHistory } from '../../src/history/runs';
import { useFakeServer } from '../helpers/lying-server';
import { runMain } from '../helpers/main';
import { temporaryDirectory } from '../helpers/serve';

/**
 * A service that says it is a petinv serve (Petinv-Store) and refuses a PATCH whose Petinv-If-Quantity no
 * longer holds, as serve does when a colleague changed the pet after the run's last read: the run must
 * take the pet's quantity from the refusal, never overwrite it unseen. A service that says nothing of
 * itself is sent no such header.
 */
const holds = new Map<string, number>();
let sent: { petId: string; quantity: number; ifQuantity: string | undefined }[] = [];
let store: string | undefined;
/** The state directory of the run going on, and what its history on disk said of each PATCH's pet as it came. */
let stateHome = '';
let onDisk: { petId: string; holds: number; recorded: unknown }[] = [];
function historyText() {
  const folder = join(stateHome, 'petinv', 'history');
  const file = existsSync(folder) && readdirSync(folder).find((name) => name.endsWith('.jsonl'));
  return file ? readFileSync(join(folder, file), 'utf8') : '';
}
function recordedOnDisk(petId: string) {
  const runs = parseHistory(historyText(), () => {});
  const change = runs.at(-1)?.changes.find((kept) => String(kept.petId) === petId);
  return change && { before: change.before, after: change.after, marks: runs.at(-1)?.marks };
}
const service = useFakeServer((req, res) => {
  const headers = { 'Content-Type': 'application/json', ...(store && { 'Petinv-Store': store }) };
  if (req.method === 'GET') {
    const items = [...holds].map(
      ([petId, quantity]) => `{"petId":${petId},"quantity":${quantity},"status":"sold"}`,
    );
    res.writeHead(200, headers);
    res.end(`[${items.join(',')}]`);
    return;
  }
  let body = '';
  req.on('data', (chunk) => (body += chunk));
  req.on('end', () => {
    const petId = String(req.url).split('/').pop() as string;
    const { quantity } = JSON.parse(body);
    const ifQuantity = req.headers['petinv-if-quantity'] as string | undefined;
    sent.push({ petId, quantity, ifQuantity });
    onDisk.push({ petId, holds: holds.get(petId) as number, recorded: recordedOnDisk(petId) });
    // A colleague got there between the run's read and this write: pet 1 to 8, pet 2 to 9, once each.
    const colleague = { '1': 8, '2': 9 }[petId];
    if (
      colleague !== undefined &&
      holds.get(petId) !== colleague &&
      sent.filter((s) => s.petId === petId).length === 1
    )
      holds.set(petId, colleague);
    const current = holds.get(petId) as number;
    if (ifQuantity !== undefined && Number(ifQuantity) !== current) {
      res.writeHead(412, { ...headers, 'Petinv-Quantity': String(current) });
      res.end(`{"code":"quantity_changed","message":"pet ${petId} holds ${current}","status":412}`);
      return;
    }
    holds.set(petId, quantity);
    res.writeHead(200, headers);
    res.end(`{"petId":${petId},"quantity":${quantity},"status":"sold"}`);
  });
});

const files = temporaryDirectory();
const env = () => ({
  PETINV_CONFIG_DIR: temporaryDirectory(),
  // biome-ignore lint/suspicious/noAssignInExpressions: the service reads the history of the run going on
  XDG_STATE_HOME: (stateHome = temporaryDirectory()),
  PETINV_ENV: 'local',
  PETINV_BASE_URL: `${service.origin}/v1`,
  PETINV_API_KEY: 'k',
});
beforeEach(() => {
  holds.clear();
  holds.set('1', 5).set('2', 6).set('3', 7);
  sent = [];
  onDisk = [];
});

async function run(sheet: string) {
  const path = join(files, `sheet-${Date.now()}.csv`);
  writeFileSync(path, sheet);
  const environment = env();
  const result = await runMain(['set', '--file', path, '--json'], { env: environment });
  const history = await runMain(['history', '--json'], { env: environment });
  return { ...result, history: JSON.parse(history.stdout || '[]') };
}

describe('a pet changed between the run’s read and its write', () => {
  it('against a petinv serve: a row with a from is a conflict; one without is sent again, its before the colleague’s', async () => {
    store = 'store-0123456789';
    const result = await run('petId,from,to\n1,5,50\n3,7,70\n');
    expect(result.code, result.stderr).toBe(11);
    expect(JSON.parse(result.stdout)).toContainEqual(
      expect.objectContaining({ conflict: true, petId: 1, from: 5, current: 8, quantity: 50 }),
    );
    expect(holds.get('1')).toBe(8);
    expect(holds.get('3')).toBe(70);
    expect(sent).toEqual([
      { petId: '1', quantity: 50, ifQuantity: '5' },
      { petId: '3', quantity: 70, ifQuantity: '7' },
    ]);

    sent = [];
    const plain = await run('petId,quantity\n2,60\n');
    expect(plain.code, plain.stderr).toBe(0);
    expect(sent).toEqual([
      { petId: '2', quantity: 60, ifQuantity: '6' },
      { petId: '2', quantity: 60, ifQuantity: '9' },
    ]);
    expect(plain.history[0].changes).toEqual([{ petId: 2, before: 9, after: 60 }]);
    // Written over the colleague's 9 with nothing to check it, and said so (QA: not a word).
    expect(plain.stderr).toContain('wrote over 1 pet changed since the input was read (pet 2 held 9)');
    expect(plain.stderr).not.toContain('--force');
  });

  it('a colleague who set the very quantity wanted: already right, no conflict, and named (QA)', async () => {
    store = 'store-0123456789';
    const result = await run('petId,from,to\n1,5,8\n');
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.find((line) => line.notice)?.notice.message).toMatch(
      /^1 pet already holds the quantity wanted but not the one the input expected.*check pet 1 \(8, expected 5\)$/,
    );
    expect(lines.find((line) => line.summary)?.summary).toMatchObject({
      alreadyRight: 1,
      conflicts: 0,
      updated: 0,
    });
    expect(sent).toEqual([{ petId: '1', quantity: 8, ifQuantity: '5' }]);
  });

  it('adjust against a petinv serve adds its delta to what the pet holds after a colleague’s change', async () => {
    store = 'store-0123456789';
    const adjusted = await runMain(['adjust', '1', '+5', '--json'], { env: env() });
    expect(adjusted.code, adjusted.stderr).toBe(0);
    expect(adjusted.stderr).toContain('pet 1 changed to 8 since it was read; applying +5 to that');
    expect(JSON.parse(adjusted.stdout)).toMatchObject({ petId: 1, from: 8, to: 13 });
    expect(sent).toEqual([
      { petId: '1', quantity: 10, ifQuantity: '5' },
      { petId: '1', quantity: 13, ifQuantity: '8' },
    ]);
    expect(holds.get('1')).toBe(13);
  });

  it('set against a petinv serve: written again on the colleague’s quantity, which is its before', async () => {
    store = 'store-0123456789';
    const environment = env();
    const result = await runMain(['set', '2', '60', '--json'], { env: environment });
    expect(result.code, result.stderr).toBe(0);
    expect(sent).toEqual([
      { petId: '2', quantity: 60, ifQuantity: '6' },
      { petId: '2', quantity: 60, ifQuantity: '9' },
    ]);
    const history = JSON.parse((await runMain(['history', '--json'], { env: environment })).stdout);
    expect(history[0].changes).toEqual([{ petId: 2, before: 9, after: 60 }]);
  });

  it('against a service that does not say it is a petinv serve: no condition is sent', async () => {
    store = undefined;
    const result = await run('petId,from,to\n3,7,70\n');
    expect(result.code, result.stderr).toBe(0);
    expect(sent).toEqual([{ petId: '3', quantity: 70, ifQuantity: undefined }]);
  });

  it('each write is in the history on disk before it is sent, with the before it is sent on: a kill leaves it for undo', async () => {
    store = 'store-0123456789';
    const result = await run('petId,quantity\n1,50\n2,60\n3,70\n');
    expect(result.code, result.stderr).toBe(0);
    const unfinished = ['unfinished'];
    // Sent concurrently: compared in any order.
    expect(onDisk).toHaveLength(5);
    expect(onDisk).toEqual(
      expect.arrayContaining([
        { petId: '1', holds: 5, recorded: { before: 5, after: 50, marks: unfinished } },
        { petId: '1', holds: 8, recorded: { before: 8, after: 50, marks: unfinished } },
        { petId: '2', holds: 6, recorded: { before: 6, after: 60, marks: unfinished } },
        { petId: '2', holds: 9, recorded: { before: 9, after: 60, marks: unfinished } },
        { petId: '3', holds: 7, recorded: { before: 7, after: 70, marks: unfinished } },
      ]),
    );
    // The run's end replaces its plan: one run, finished.
    expect(result.history).toHaveLength(1);
    expect(result.history[0]).toMatchObject({ marks: [], pets: 3 });
    expect(result.history[0].changes).toContainEqual({ petId: 1, before: 8, after: 50 });
  });

  it('a pet found changed and held back (a conflict) leaves the run’s plan on disk before any later write', async () => {
    store = 'store-0123456789';
    const result = await run('petId,from,to\n1,5,50\n3,7,70\n');
    expect(result.code, result.stderr).toBe(11);
    // Pet 1 is a conflict once serve names 8: by pet 3's write the plan on disk no longer holds it.
    expect(onDisk.at(-1)).toEqual({ petId: '3', holds: 7, recorded: expect.objectContaining({ before: 7 }) });
    const text = historyText();
    const planOnly = text
      .split('\n')
      .filter((line) => line.includes('unfinished'))
      .join('\n');
    expect(parseHistory(planOnly, () => {})[0]?.changes).toEqual([{ petId: 3n, before: 7, after: 70 }]);
    expect(result.history[0].changes).toEqual([{ petId: 3, before: 7, after: 70 }]);
  });

  it('--force against a petinv serve: a pet changed since the read is written over on its new quantity, its before', async () => {
    store = 'store-0123456789';
    const environment = env();
    const path = join(files, 'forced.csv');
    writeFileSync(path, 'petId,from,to\n1,5,50\n2,1,60\n');
    const result = await runMain(['set', '--file', path, '--force', '--json'], { env: environment });
    expect(result.code, result.stderr).toBe(0);
    // The condition is sent all the same, so that the history's before is what the pet held when written.
    expect(sent).toEqual(
      expect.arrayContaining([
        { petId: '1', quantity: 50, ifQuantity: '5' },
        { petId: '1', quantity: 50, ifQuantity: '8' },
        { petId: '2', quantity: 60, ifQuantity: '6' },
        { petId: '2', quantity: 60, ifQuantity: '9' },
      ]),
    );
    expect(result.stderr).toMatch(
      /"--force wrote over 2 pets changed since the input was read \(pet 1 held 8, pet 2 held 9\);/,
    );
    const [run] = JSON.parse((await runMain(['history', '--json'], { env: environment })).stdout);
    expect(run.marks).toEqual(['forced']);
    expect(run.changes).toEqual(
      expect.arrayContaining([
        { petId: 1, before: 8, after: 50 },
        { petId: 2, before: 9, after: 60 },
      ]),
    );
  });
});
