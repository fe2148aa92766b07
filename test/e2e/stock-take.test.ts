import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { useInventoryServer } from '../helpers/inventory-server';
import { runPetinv, temporaryDirectory } from '../helpers/serve';

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
});
