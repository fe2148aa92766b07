import { beforeAll, describe, expect, it } from 'vitest';
import { useInventoryServer } from '../helpers/inventory-server';
import { runMain } from '../helpers/main';

const KEY = 'dry-run-key';
const served = useInventoryServer(KEY);
const { requests } = served;
let env: NodeJS.ProcessEnv;
beforeAll(() => {
  env = { ...served.env, PETINV_ENV: 'production' };
});

const petinv = (args: string[]) => runMain(args, { env });
const patches = () => requests.filter((request) => request.startsWith('PATCH'));

describe('--dry-run never writes', () => {
  it('a bulk dry run with a bad line ends as the real run would (exit 9), the line among the results', async () => {
    const input = '1 5\nnot a line\n2 6\n';
    const plain = await runMain(['set', '-', '--dry-run'], { env, input });
    expect(plain.code).toBe(9);
    expect(plain.stdout).toBe('1: 12 → 5\n2: 24 → 6\n');
    expect(plain.stderr).toMatch(/line 2: .*\(skipped\)/);
    expect(plain.stderr).toContain('dry run: 1 line was skipped; nothing was written to production');

    const ndjson = await runMain(['set', '-', '--dry-run', '--ndjson'], { env, input });
    expect(ndjson.code).toBe(9);
    const results = ndjson.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(results[0]).toMatchObject({ input: 2, ok: false, skipped: true });
    expect(results.slice(1).map((result) => result.petId)).toEqual([1, 2]);

    const json = await runMain(['--json', 'set', '-', '--dry-run'], { env, input });
    expect(json.code).toBe(9);
    expect(JSON.parse(json.stdout)[0]).toMatchObject({ input: 2, ok: false, skipped: true });
    // stderr holds one JSON line: the error, the dry run's summary beside it.
    const errors = json.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(errors).toEqual([
      {
        error: expect.objectContaining({ code: 'partial_failure' }),
        dryRun: { changes: 2, unknown: 0, alreadyRight: 0, conflicts: 0, written: 0 },
      },
    ]);
    expect(patches()).toEqual([]);
  });

  it('set 42 7 --dry-run reads current stock, shows the change, sends no PATCH', async () => {
    const result = await petinv(['set', '4', '99', '--dry-run']);
    expect(result).toEqual({
      code: 0,
      stdout: '4: 23 → 99\n',
      stderr: 'petinv: dry run: 1 change against production; nothing was written\n',
    });
    expect(requests).toEqual(['GET /v1/inventory']);
  });

  it('set 4 23 --dry-run when pet 4 holds 23: unchanged, and no change counted', async () => {
    const result = await petinv(['set', '4', '23', '--dry-run']);
    expect(result).toEqual({
      code: 0,
      stdout: '4: 23 → 23 (unchanged)\n',
      stderr: 'petinv: dry run: 0 changes against production; nothing was written\n',
    });
  });

  it('adjust --dry-run shows the sum and sends no PATCH', async () => {
    const result = await petinv(['adjust', '4', '+5', '--dry-run']);
    expect(result.stdout).toBe('4: 23 → 28\n');
    expect(result.code).toBe(0);
    expect(patches()).toEqual([]);
  });

  it('honours --json with the same object as each step of a bulk dry run', async () => {
    expect(JSON.parse((await petinv(['--json', 'set', '4', '0', '--dry-run'])).stdout)).toEqual({
      petId: 4,
      from: 23,
      to: 0,
      found: true,
    });
    expect(JSON.parse((await petinv(['--json', 'adjust', '4', '-3', '--dry-run'])).stdout)).toEqual({
      petId: 4,
      from: 23,
      to: 20,
      found: true,
    });
    expect(patches()).toEqual([]);
  });

  it('a pet that is not there is a 404, as the real write would be', async () => {
    const result = await petinv(['set', '424242', '1', '--dry-run']);
    expect(result.code).toBe(5);
    expect(result.stderr).toBe('petinv: pet 424242 not found in production (it is not in the inventory)\n');
    expect(patches()).toEqual([]);
  });

  it('a bulk dry run with a pet that is not there ends as the real run would (exit 9)', async () => {
    const input = '4 5\n424242 1\n';
    const rehearsal = await runMain(['set', '-', '--dry-run'], { env, input });
    expect(rehearsal.code).toBe(9);
    expect(rehearsal.stdout).toBe('4: 23 → 5\n424242: not in the inventory of production\n');
    expect(rehearsal.stderr).toContain(
      'dry run: 1 pet is not in the inventory; nothing was written to production',
    );
    const json = await runMain(['--json', 'set', '-', '--dry-run'], { env, input: `${input}oops\n` });
    expect(json.code).toBe(9);
    expect(JSON.parse(json.stderr.trim().split('\n').at(-1) ?? '')).toMatchObject({
      error: {
        code: 'partial_failure',
        message:
          'dry run: 1 pet is not in the inventory and 1 line was skipped; nothing was written to production',
      },
    });
    expect(patches()).toEqual([]);
  });

  it('a bulk dry run with skipped lines and conflicts ends in exit 9, its last line counting both', async () => {
    const input = 'petId,from,quantity\n4,999,5\noops,1,2\n';
    const rehearsal = await runMain(['set', '-', '--dry-run'], { env, input });
    expect(rehearsal.code).toBe(9);
    expect(rehearsal.stderr.trim().split('\n').at(-1)).toBe(
      'petinv: dry run: 1 row was skipped and 1 pet changed since the input was read (conflicts); nothing was written to production',
    );
    expect(patches()).toEqual([]);
  });

  it('without --dry-run the same command does write (the log sees PATCHes)', async () => {
    expect((await petinv(['set', '4', '23'])).code).toBe(0);
    expect(patches()).toEqual(['PATCH /v1/inventory/4']);
  });
});

describe('options that mean nothing for one pet are usage errors', () => {
  it.each([
    [['set', '4', '1', '--strict'], '--strict applies only to bulk updates'],
    [['set', '4', '1', '--concurrency', '2'], '--concurrency applies only to bulk updates'],
    [['set', '4', '1', '--ndjson'], '--ndjson applies only to bulk updates'],
    [['set', '4', '1', '--strict', '--ndjson'], '--strict, --ndjson apply only to bulk updates'],
    [['set', '4', '1', '--all'], '--all applies only to bulk updates'],
    [['set', '4', '1', '--force'], '--force applies only to bulk updates'],
  ])('%j exits 2 and sends nothing', async (args, message) => {
    const result = await petinv(args);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`petinv: ${message}`);
    expect(requests).toEqual([]);
  });
});
