import { describe, expect, it } from 'vitest';
import { useInventoryServer } from '../helpers/inventory-server';
import { runMain } from '../helpers/main';

const served = useInventoryServer('get-key');

describe('petinv get', () => {
  it('prints one pet as list prints it: TSV in a pipe, the item with --json, a row on a terminal', async () => {
    const listed = (await runMain(['list'], { env: served.env })).stdout.split('\n');
    const line = listed[2] as string;
    const petId = line.split('\t')[0] as string;

    const tsv = await runMain(['get', petId], { env: served.env });
    expect(tsv.code).toBe(0);
    expect(tsv.stdout).toBe(`${line}\n`);

    const json = await runMain(['get', petId, '--json'], { env: served.env });
    const [, status, quantity] = line.split('\t');
    expect(JSON.parse(json.stdout)).toEqual({ petId: Number(petId), quantity: Number(quantity), status });

    const table = await runMain(['get', petId], { env: served.env, tty: true });
    expect(table.stdout).toMatch(/PET ID\s+STATUS\s+QUANTITY/);
    expect(table.stdout).toContain(` ${petId} `);

    const fields = await runMain(['get', petId, '--fields', 'quantity'], { env: served.env });
    expect(fields.stdout).toBe(`${quantity}\n`);
  });

  it('a pet that does not exist is exit 5, and a bad petId a usage error before anything is sent', async () => {
    const missing = await runMain(['get', '424242'], { env: served.env });
    expect(missing.code).toBe(5);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toBe('petinv: pet 424242 not found in local (it is not in the inventory)\n');
    const json = await runMain(['get', '424242', '--json'], { env: served.env });
    // The service answered the list with 200; no answer had the status 404.
    expect(JSON.parse(json.stderr).error).toMatchObject({ code: 'pet_not_found', status: null, exitCode: 5 });

    const bad = await runMain(['get', 'x1'], { env: served.env });
    expect(bad.code).toBe(2);
  });
});
