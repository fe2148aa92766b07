import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { useInventoryServer } from '../helpers/inventory-server';
import { listedQuantities, runMain } from '../helpers/main';
import { temporaryDirectory } from '../helpers/serve';

/**
 * A plan made from an input that says what each pet held (its from, a count sheet's expected) carries that,
 * never a quantity read later: a colleague's change between the steps is a conflict at every step after it.
 */
const KEY = 'plan-from-key';
const served = useInventoryServer(KEY, { seed: 20 });
let env: NodeJS.ProcessEnv;
let files: string;
beforeAll(() => {
  files = temporaryDirectory();
  env = { ...served.env, XDG_STATE_HOME: temporaryDirectory() };
});
const petinv = (args: string[]) => runMain(args, { env });
const file = (name: string, text: string) => {
  const path = join(files, name);
  writeFileSync(path, text);
  return path;
};
const quantities = () => listedQuantities(env);

describe('export, count, plan, apply with colleagues changing pets between the steps', () => {
  it('nothing of theirs is reverted: each changed pet is a conflict at the step after the change', async () => {
    const start = await quantities();
    // Step 1: the export says what each pet held (from); step 2: pets 1, 11 and 12 were counted.
    const sheet = file(
      'count.csv',
      `petId,from,quantity\n1,${start.get(1)},101\n11,${start.get(11)},111\n12,${start.get(12)},112\n13,${start.get(13)},113\n`,
    );
    // A colleague, before the plan: adjust 11 +5.
    expect((await petinv(['adjust', '11', '+5'])).code).toBe(0);
    const plan = await petinv(['set', '--file', sheet, '--dry-run', '-o', 'csv']);
    expect(plan.code).toBe(11);
    expect(plan.stderr).toContain(
      `pet 11 holds ${(start.get(11) as number) + 5} in local, not ${start.get(11)}`,
    );
    expect(plan.stdout).toBe(
      `petId,from,to,found\n1,${start.get(1)},101,true\n12,${start.get(12)},112,true\n13,${start.get(13)},113,true\n`,
    );
    // Another, between the plan and its run: set 12 0.
    expect((await petinv(['set', '12', '0'])).code).toBe(0);
    const applied = await petinv(['set', '--file', file('plan.csv', plan.stdout)]);
    expect(applied.code).toBe(11);
    expect(applied.stderr).toContain(`pet 12 holds 0 in local, not ${start.get(12)}`);
    const now = await quantities();
    expect([now.get(1), now.get(11), now.get(12), now.get(13)]).toEqual([
      101,
      (start.get(11) as number) + 5,
      0,
      113,
    ]);
  });

  it('a forced dry run still prints the input from in its plan, so the plan applied later checks it', async () => {
    const start = await quantities();
    const sheet = file('forced.csv', `petId,from,quantity\n5,${start.get(5)},505\n`);
    await petinv(['set', '5', '77']);
    const plan = await petinv(['set', '--file', sheet, '--dry-run', '--force', '-o', 'csv']);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toBe(`petId,from,to,found\n5,${start.get(5)},505,true\n`);
    const text = await petinv(['set', '--file', sheet, '--dry-run', '--force']);
    expect(text.stdout).toBe(`5: ${start.get(5)} → 505 (holds 77 now)\n`);
    const applied = await petinv(['set', '--file', file('forced-plan.csv', plan.stdout)]);
    expect(applied.code).toBe(11);
    expect((await quantities()).get(5)).toBe(77);
  });
});

describe('a dry run applies the rules it knows petinv serve applies', () => {
  it('a negative quantity is refused in the dry run as in the run: exit 9 in bulk, 6 for one pet', async () => {
    const sheet = file('negative.csv', 'petId,quantity\n6,20\n7,-3\n');
    const dry = await petinv(['set', '--file', sheet, '--dry-run']);
    expect(dry.code).toBe(9);
    expect(dry.stdout).toBe(`6: ${(await quantities()).get(6)} → 20\n`);
    expect(dry.stderr).toContain('3: pet 7: local (a petinv serve) refuses a negative quantity (-3)');
    expect(dry.stderr).toContain('1 update would be refused (a negative quantity)');
    const real = await petinv(['set', '--file', sheet]);
    expect(real.code).toBe(9);
    expect((await petinv(['set', '7', '-3', '--dry-run'])).code).toBe(6);
    expect((await petinv(['set', '7', '-3'])).code).toBe(6);
    expect((await petinv(['adjust', '7', '-100000', '--dry-run'])).code).toBe(6);
  });
});
