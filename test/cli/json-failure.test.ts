import { describe, expect, it } from 'vitest';
import { bulkSummary } from '../helpers/bulk-summary';
import { useInventoryServer } from '../helpers/inventory-server';
import { runMain } from '../helpers/main';
import { closedPort, temporaryDirectory } from '../helpers/serve';

/** With --json a failing run prints exactly one line on stderr, a JSON object with `error`, whatever failed. */

const KEY = 'json-failure-key';
const served = useInventoryServer(KEY);

async function oneLine(args: string[], input = '', env: NodeJS.ProcessEnv = served.env) {
  const result = await runMain(['--json', ...args], { env, input });
  expect(result.code, result.stderr).not.toBe(0);
  const lines = result.stderr.split('\n');
  expect(lines, result.stderr).toHaveLength(2);
  expect(lines[1]).toBe('');
  const parsed = JSON.parse(lines[0] as string);
  expect(parsed.error).toMatchObject({ exitCode: result.code });
  return parsed;
}

describe('a failing --json run: one JSON line on stderr', () => {
  it('a bulk run that partly failed: the summary beside the error', async () => {
    const line = await oneLine(['set', '-'], '1 1005\n424242 1\nnot a line\n');
    expect(line).toEqual({
      error: expect.objectContaining({ code: 'partial_failure', exitCode: 9 }),
      // A finished run names its refused row too, as a stopped one does.
      summary: bulkSummary({
        updated: 1,
        changed: 1,
        failed: 1,
        skipped: 1,
        notApplied: [{ input: 2, petId: 424242 }],
      }),
    });
  });

  it('--strict: the bad lines beside the error, nothing sent', async () => {
    const line = await oneLine(['set', '-', '--strict'], '1 5\nx 1\n2 3 4 5\n');
    expect(line.error).toMatchObject({ code: 'usage', exitCode: 2 });
    expect(line.skipped.map((skipped: { input: number }) => skipped.input)).toEqual([2, 3]);
  });

  it('a dry run that would fail: its summary beside the error', async () => {
    const line = await oneLine(['set', '-', '--dry-run'], '2 2005\n424242 1\n');
    expect(line).toEqual({
      error: expect.objectContaining({ code: 'partial_failure', exitCode: 9 }),
      dryRun: { changes: 1, unknown: 1, alreadyRight: 0, conflicts: 0, written: 0 },
    });
  });

  it('a dry run that finds conflicts: them and its summary beside the error, on its one line', async () => {
    const line = await oneLine(['set', '-', '--dry-run'], 'petId,from,to\n1,999999,5\n');
    expect(line.error).toMatchObject({ code: 'conflict', exitCode: 11 });
    expect(line.error.message).toMatch(/^dry run: 1 conflict in .*; nothing was written$/);
    expect(line.dryRun).toMatchObject({ changes: 0, conflicts: 1, written: 0 });
    expect(line.conflicts).toEqual([
      expect.objectContaining({ input: 2, ok: false, conflict: true, petId: 1, from: 999999, quantity: 5 }),
    ]);
    // With a pet not in the inventory too: exit 9, the conflicts beside it still.
    const mixed = await oneLine(['set', '-', '--dry-run'], 'petId,from,to\n1,999999,5\n424242,1,2\n');
    expect(mixed.error).toMatchObject({ code: 'partial_failure', exitCode: 9 });
    expect(mixed.conflicts).toHaveLength(1);
  });

  it('a run that cannot read the inventory to plan (a refused key, a service that cannot be reached): the error alone', async () => {
    // A bulk run reads the inventory once before it sends anything: a refused key or an unreachable
    // service ends it there, before any update, so there is no run to summarize.
    const refused = await oneLine(['set', '-'], '1 5\n2 6\n', { ...served.env, PETINV_API_KEY: 'wrong' });
    expect(refused.error).toMatchObject({ exitCode: 4 });
    expect(refused.summary).toBeUndefined();
    const env = {
      PETINV_CONFIG_DIR: temporaryDirectory(),
      PETINV_BASE_URL: `http://127.0.0.1:${await closedPort()}/v1`,
      PETINV_API_KEY: KEY,
    };
    const unreachable = await oneLine(['--retries', '0', 'set', '-'], '1 5\n2 6\n3 7\n4 8\n', env);
    expect(unreachable.error).toMatchObject({ exitCode: 7 });
    expect(unreachable.summary).toBeUndefined();
  });

  it('a sheet with notices (a column nobody reads, a status the service does not hold): they stand beside the error', async () => {
    const sheet = 'petId,quantity,note,status\n1,1006,x,sold\n424242,1,y,available\n';
    const line = await oneLine(['set', '-'], sheet);
    expect(line.error).toMatchObject({ code: 'partial_failure', exitCode: 9 });
    expect(line.notices).toEqual([
      { message: expect.stringContaining('ignoring column "note"') },
      { message: expect.stringContaining('1 row gives a status other than the service') },
    ]);
    const dryRun = await oneLine(['set', '-', '--dry-run'], sheet);
    expect(dryRun.notices).toHaveLength(2);
    // A run that succeeds says them as before, each its own line, after its summary.
    const done = await runMain(['--json', 'set', '-'], {
      env: served.env,
      input: 'petId,quantity,note\n1,1007,x\n',
    });
    expect(done.code).toBe(0);
    expect(
      done.stderr
        .trimEnd()
        .split('\n')
        .map((text) => Object.keys(JSON.parse(text))),
    ).toEqual([['summary'], ['notice']]);
  });

  it('-o json however it is written (-o=json, -ojson, -vo json): the same one line', async () => {
    for (const output of [['-o=json'], ['-ojson'], ['-vo', 'json'], ['-vojson'], ['--output', 'json']]) {
      const result = await runMain([...output, 'get', 'x'], { env: served.env });
      expect(result.code, output.join(' ')).toBe(2);
      expect(JSON.parse(result.stderr).error, output.join(' ')).toMatchObject({ code: 'usage', exitCode: 2 });
    }
    // The last -o is the one in effect, as for the output itself.
    const table = await runMain(['-o', 'json', '-o', 'table', 'get', 'x'], { env: served.env });
    expect(table.stderr).toMatch(/^petinv: /);
    const json = await runMain(['-o', 'table', '--output=json', 'get', 'x'], { env: served.env });
    expect(JSON.parse(json.stderr).error).toMatchObject({ code: 'usage', exitCode: 2 });
  });

  it('a successful bulk run: its summary alone, one line', async () => {
    const result = await runMain(['--json', 'set', '-'], { env: served.env, input: '3 3005\n' });
    expect(result.code).toBe(0);
    expect(
      result.stderr
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line)),
    ).toEqual([
      {
        summary: bulkSummary({ updated: 1, changed: 1 }),
      },
    ]);
  });
});
