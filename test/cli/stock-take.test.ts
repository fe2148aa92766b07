import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { useInventoryServer } from '../helpers/inventory-server';
import { answer, startFakeServer } from '../helpers/lying-server';
import { listedQuantities, runMain } from '../helpers/main';
import { temporaryDirectory } from '../helpers/serve';

/**
 * The stock-take loop against a real petinv serve of 50 pets, whose own log counts the requests: export,
 * edit, dry run to a plan, apply, undo; and what happens when someone else changes a pet in between.
 */
const KEY = 'stock-take-key';
const served = useInventoryServer(KEY, { seed: 50 });
const { requests } = served;
let env: NodeJS.ProcessEnv;
let files: string;
let stateHome: string;
beforeAll(() => {
  stateHome = temporaryDirectory();
  files = temporaryDirectory();
  env = { ...served.env, XDG_STATE_HOME: stateHome };
});

const petinv = (args: string[], input?: string) => runMain(args, { env, input });
const patches = () => requests.filter((request) => request.startsWith('PATCH'));
const gets = () => requests.filter((request) => request.startsWith('GET'));
const file = (name: string, text: string) => {
  const path = join(files, name);
  writeFileSync(path, text);
  return path;
};
const quantities = () => listedQuantities(env);

describe('a sheet is read by its header', () => {
  it('a 50-row export in swapped column order, one quantity edited: exactly one PATCH, to the right pet', async () => {
    const exported = await petinv(['list', '--csv', '--fields', 'quantity,petId']);
    const rows = exported.stdout.trimEnd().split('\n');
    expect(rows[0]).toBe('quantity,petId');
    expect(rows).toHaveLength(51);
    const before = await quantities();
    const [, petIdText] = (rows[7] as string).split(',');
    const petId = Number(petIdText);
    rows[7] = `${(before.get(petId) as number) + 5},${petId}`;
    requests.length = 0;
    const result = await petinv(['set', '--file', file('export.csv', `${rows.join('\n')}\n`)]);
    expect(result.code, result.stderr).toBe(0);
    expect(patches()).toEqual([`PATCH /v1/inventory/${petId}`]);
    expect(gets()).toEqual(['GET /v1/inventory']);
    expect(result.stderr).toMatch(
      /updated 1 of 50 pets in local in [\d.]+s; 1 changed, 49 already right, 0 failed, 0 conflicts/,
    );
    const after = await quantities();
    for (const [id, quantity] of before) expect(after.get(id)).toBe(id === petId ? quantity + 5 : quantity);
  });

  it('a spreadsheet CSV: BOM, CRLF, quoted "PetId","Quantity", notes with commas, trailing ",,," rows', async () => {
    const sheet =
      '\ufeff"PetId","Quantity","Notes"\r\n"1","501","shelf 3, top"\r\n"2","502","said ""two"""\r\n,,\r\n,,,\r\n';
    requests.length = 0;
    const result = await petinv(['set', '--file', file('sheet.csv', sheet)]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('petinv: note: ignoring column "Notes"');
    expect(patches().sort()).toEqual(['PATCH /v1/inventory/1', 'PATCH /v1/inventory/2']);
    const now = await quantities();
    expect([now.get(1), now.get(2)]).toEqual([501, 502]);
  });

  it('semicolon- and tab-delimited sheets, columns in any case and order', async () => {
    expect(
      (await petinv(['set', '--file', file('semi.csv', 'Notiz;PETID;Quantity\r\nx;3;603\r\n')])).code,
    ).toBe(0);
    expect(
      (await petinv(['set', '--file', file('tabs.tsv', 'status\tquantity\tpetid\nsold\t604\t4\n')])).code,
    ).toBe(0);
    const now = await quantities();
    expect([now.get(3), now.get(4)]).toEqual([603, 604]);
  });

  it("a status that differs from the service's is counted in one notice, and never written", async () => {
    const statuses = JSON.parse((await petinv(['list', '--json'])).stdout) as {
      petId: number;
      status: string;
    }[];
    const other = (status: string) => (status === 'sold' ? 'available' : 'sold');
    const sheet = `petId,status,quantity\n${statuses
      .slice(0, 3)
      .map((item) => `${item.petId},${other(item.status)},7${item.petId}`)
      .join('\n')}\n`;
    const result = await petinv(['set', '--file', file('status.csv', sheet)]);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain("petinv: note: 3 rows give a status other than the service's in local");
    const after = JSON.parse((await petinv(['list', '--json'])).stdout) as {
      petId: number;
      status: string;
    }[];
    expect(after.slice(0, 3).map((item) => item.status)).toEqual(
      statuses.slice(0, 3).map((item) => item.status),
    );
  });

  it('a header without a petId column is refused before any request: exit 2, naming what it found', async () => {
    requests.length = 0;
    const result = await petinv(['set', '--file', file('bad.csv', 'code,quantity\n1,5\n')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /^petinv: bulk input: the first line reads as a header with columns "code", "quantity", but none of them names the pet; petinv reads a pet column/,
    );
    expect(requests).toEqual([]);
  });

  it('an empty file is refused as a failed save, not applied as nothing to do (QA); empty stdin is nothing to do', async () => {
    requests.length = 0;
    for (const text of ['', '\n\r\n  \n']) {
      const path = file('empty.csv', text);
      const result = await petinv(['set', '--file', path]);
      expect(result.code).toBe(2);
      expect(result.stderr).toBe(
        `petinv: --file ${path} is empty (no rows, no header): was it saved? Nothing was sent (run petinv help set)\n`,
      );
    }
    expect(requests).toEqual([]);
    // From stdin (a pipeline that found nothing to change), nothing to do.
    expect((await petinv(['set', '-'], '')).code).toBe(0);
    // A header alone is a sheet of no pets, as an empty inventory's export is: said (QA), not refused.
    const header = await petinv(['set', '--file', file('header.csv', 'petId,expected,counted\n')]);
    expect(header.code).toBe(0);
    expect(header.stderr).toContain('petinv: note: the sheet has a header and no rows: nothing is sent\n');
    // A file that is not there, in words.
    const missing = await petinv(['set', '--file', join(temporaryDirectory(), 'count.csv')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^petinv: cannot read --file \S+count\.csv: no such file or directory/);
  });

  it('a bad row is reported with its row and pet and skipped; --strict sends nothing', async () => {
    const sheet = file('rows.csv', 'petId,quantity\n5,705\n6,many\n');
    requests.length = 0;
    const strict = await petinv(['set', '--file', sheet, '--strict']);
    expect(strict.code).toBe(2);
    expect(strict.stderr).toContain('row 3 (pet 6): quantity "many" is not a whole number');
    expect(requests).toEqual([]);
    const loose = await petinv(['set', '--file', sheet]);
    expect(loose.code).toBe(9);
    expect(loose.stderr).toContain('row 3 (pet 6): quantity "many" is not a whole number (skipped)');
    // Only what happened is counted in the failure's words: no "0 updates failed" (QA).
    expect(loose.stderr).toMatch(/petinv: 1 row was skipped in local\n$/);
    expect(patches()).toEqual(['PATCH /v1/inventory/5']);
  });
});

describe('every format petinv prints reads back as input', () => {
  it('list and get in each format and field order, and each plan format, apply as nothing to do', async () => {
    const outputs = [
      ['list'],
      ['list', '--csv'],
      ['list', '--csv', '--fields', 'quantity,status,petId'],
      ['list', '--csv', '--fields', 'status,quantity,petId'],
      ['list', '--fields', 'quantity,petId'],
      ['list', '--fields', 'quantity,status,petId'],
      ['list', '--fields', 'petId,quantity,status'],
      ['list', '-o', 'tsv', '--fields', 'status,quantity,petId'],
      ['list', '--json'],
      ['list', '--ndjson'],
      ['list', '--json', '--fields', 'quantity,petId'],
      ['list', '--ndjson', '--fields', 'quantity,petId'],
      ['get', '7'],
      ['get', '7', '--json'],
      ['get', '7', '-o', 'csv', '--fields', 'quantity,petId'],
    ];
    for (const args of outputs) {
      const text = (await petinv(args)).stdout;
      requests.length = 0;
      const result = await petinv(['set', '-'], text);
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(0);
      expect(patches(), args.join(' ')).toEqual([]);
    }
  });

  it('a dry run to a plan in csv, tsv, json and ndjson: set --file applies exactly that plan', async () => {
    const sheet = file('edit.csv', 'petId,quantity\n10,910\n11,911\n');
    for (const format of ['csv', 'tsv', 'json', 'ndjson']) {
      const target = 1000 + ['csv', 'tsv', 'json', 'ndjson'].indexOf(format);
      writeFileSync(
        sheet,
        `petId,quantity\n10,${target}\n11,${target}\n12,${(await quantities()).get(12)}\n`,
      );
      requests.length = 0;
      const plan = await petinv(['set', '--file', sheet, '--dry-run', '-o', format]);
      expect(plan.code, plan.stderr).toBe(0);
      expect(patches()).toEqual([]);
      if (format === 'csv') expect(plan.stdout.split('\n')[0]).toBe('petId,from,to,found');
      const applied = await petinv(['set', '--file', file(`plan.${format}`, plan.stdout)]);
      expect(applied.code, `${format}: ${applied.stderr}`).toBe(0);
      expect(patches().sort()).toEqual(['PATCH /v1/inventory/10', 'PATCH /v1/inventory/11']);
      const now = await quantities();
      expect([now.get(10), now.get(11)]).toEqual([target, target]);
    }
    // A TSV plan in another field order has a heading line, and reads back by it.
    writeFileSync(sheet, 'petId,quantity\n11,3000\n');
    const tsvPlan = await petinv([
      'set',
      '--file',
      sheet,
      '--dry-run',
      '-o',
      'tsv',
      '--fields',
      'to,from,petId',
    ]);
    expect(tsvPlan.stdout).toBe('to\tfrom\tpetId\n3000\t1003\t11\n');
    requests.length = 0;
    expect((await petinv(['set', '--file', file('plan-reordered.tsv', tsvPlan.stdout)])).code).toBe(0);
    expect(patches()).toEqual(['PATCH /v1/inventory/11']);
    // A CSV plan in another field order reads back by its header, its from checked.
    writeFileSync(sheet, 'petId,quantity\n10,2000\n');
    const reordered = await petinv([
      'set',
      '--file',
      sheet,
      '--dry-run',
      '-o',
      'csv',
      '--fields',
      'to,found,from,petId',
    ]);
    expect(reordered.stdout).toBe('to,found,from,petId\n2000,true,1003,10\n');
    await petinv(['set', '10', '1']);
    const stale = await petinv(['set', '--file', file('reordered.csv', reordered.stdout)]);
    expect(stale.code).toBe(11);
    expect(stale.stderr).toContain('pet 10 holds 1 in local, not 1003');
  });
});

describe('a plan never overwrites a newer count', () => {
  it('someone else changed one pet after the plan was made: theirs is kept, exit 11, the pet named', async () => {
    const start = await quantities();
    const plan = await petinv([
      'set',
      '--file',
      file('next.csv', 'petId,quantity\n20,120\n21,121\n22,122\n'),
      '--dry-run',
      '-o',
      'csv',
    ]);
    expect(plan.code).toBe(0);
    // A colleague sells two of pet 21 meanwhile.
    expect((await petinv(['set', '21', String((start.get(21) as number) - 2)])).code).toBe(0);
    requests.length = 0;
    const applied = await petinv(['set', '--file', file('next-plan.csv', plan.stdout)]);
    expect(applied.code).toBe(11);
    expect(patches().sort()).toEqual(['PATCH /v1/inventory/20', 'PATCH /v1/inventory/22']);
    expect(applied.stderr).toContain(
      `row 3: pet 21 holds ${(start.get(21) as number) - 2} in local, not ${start.get(21)} as expected: someone changed it since`,
    );
    expect(applied.stderr).toMatch(/1 conflict in local: pet 21 changed since/);
    expect((await quantities()).get(21)).toBe((start.get(21) as number) - 2);

    const json = await runMain(['--json', 'set', '--file', join(files, 'next-plan.csv')], { env });
    expect(json.code).toBe(11);
    expect(JSON.parse(json.stdout)).toEqual([
      expect.objectContaining({
        input: 3,
        ok: false,
        conflict: true,
        petId: 21,
        from: start.get(21),
        current: (start.get(21) as number) - 2,
        quantity: 121,
      }),
    ]);
    // A failing --json run: one line on stderr, the error with the summary beside it.
    expect(json.stderr.trimEnd().split('\n')).toHaveLength(1);
    const failure = JSON.parse(json.stderr);
    expect(failure.error).toMatchObject({ code: 'conflict', exitCode: 11 });
    expect(failure.summary).toMatchObject({ conflicts: 1, updated: 0 });

    // A failure too (a pet not in the inventory): exit 9 wins, and the message still names the conflict.
    const mixed = await petinv(['set', '--file', file('mixed.csv', `${plan.stdout}424242,1,2,true\n`)]);
    expect(mixed.code).toBe(9);
    expect(mixed.stderr).toMatch(/1 update failed in local; 1 conflict kept \(pet 21\)/);

    const forced = await petinv(['set', '--file', join(files, 'next-plan.csv'), '--force']);
    expect(forced.code).toBe(0);
    expect((await quantities()).get(21)).toBe(121);
    // Said before it is written (before the question, on production), and named once written: the
    // colleague's count is in the history for undo.
    expect(forced.stderr).toContain(
      '--force: 1 pet no longer holds its from (changed since the input was read), and is written over all the same',
    );
    expect(forced.stderr).toContain(
      `--force wrote over 1 pet changed since the input was read (pet 21 held ${(start.get(21) as number) - 2});`,
    );
  });

  it('a colleague set a pet to the very count after the export: already right, not sent, and named (QA)', async () => {
    const sheet = (await petinv(['list', '--count-sheet'])).stdout.trimEnd().split('\n');
    const expected = Number((sheet[30] as string).split(',')[2]);
    const counted = (rows: string[]) =>
      rows.map((row, index) => (index === 30 ? `${row}${expected + 3}` : row));
    const path = file('count-to-colleague.csv', `${counted(sheet).join('\n')}\n`);
    expect((await petinv(['set', '30', String(expected + 3)])).code).toBe(0);
    requests.length = 0;
    for (const args of [['--dry-run'], []]) {
      const result = await petinv(['set', '--file', path, ...args]);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toContain(
        `note: 1 pet already holds the quantity wanted but not the one the input expected: changed since the input was read (by someone else, or an earlier run of it); check pet 30 (${expected + 3}, expected ${expected})`,
      );
    }
    expect(patches()).toEqual([]);
    // --all sends it all the same, changing nothing: named too, and never said to be forced (QA).
    const all = await petinv(['set', '--file', path, '--dry-run', '--all']);
    expect(all.stderr).toContain(`check pet 30 (${expected + 3}, expected ${expected})`);
    expect(all.stderr).not.toContain('--force');
  });

  it('the sheet applied again names only the colleague’s pet at the count, not those its own first run wrote (QA)', async () => {
    const now = await quantities();
    const held = (petId: number) => now.get(petId) as number;
    const sheet = [44, 45, 46].map((petId) => `${petId},${held(petId)},${held(petId) + 1}`);
    const path = file('applied-twice.csv', `petId,expected,counted\n${sheet.join('\n')}\n`);
    expect((await petinv(['set', '46', String(held(46) + 1)])).code).toBe(0);
    const note = `already holds the quantity wanted but not the one the input expected: changed since the input was read (by someone else, or an earlier run of it); check pet 46 (${held(46) + 1}, expected ${held(46)})\n`;
    for (let run = 1; run <= 2; run++) {
      const result = await petinv(['set', '--file', path]);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr, `run ${run}`).toContain(`note: 1 pet ${note}`);
    }
  });

  it('a row the service refused as sent (an unknown pet) is not advised to be sent again (QA)', async () => {
    const result = await petinv([
      'set',
      '--file',
      file('unknown-pet.csv', 'petId,quantity\n30,7\n999999,3\n'),
    ]);
    expect(result.code, result.stderr).toBe(9);
    expect(result.stderr).toContain(
      'refused as sent: row 3 (pet 999999); sent again, it would be refused again: fix or remove it',
    );
    expect(result.stderr).not.toContain('not applied');
  });

  it('--all sends every row, also those already right', async () => {
    requests.length = 0;
    const result = await petinv(['set', '--file', file('all.csv', 'petId,quantity\n30,0\n30,0\n'), '--all']);
    expect(result.code).toBe(9);
    const again = await petinv(['set', '--file', file('all2.csv', 'petId,quantity\n30,0\n31,0\n'), '--all']);
    expect(again.code).toBe(0);
    requests.length = 0;
    const all = await petinv(['set', '--file', join(files, 'all2.csv'), '--all']);
    expect(patches()).toHaveLength(2);
    expect(all.stderr).toMatch(
      /updated 2 of 2 pets in local in [\d.]+s; 0 changed, 2 already right, 0 failed/,
    );
    requests.length = 0;
    await petinv(['set', '--file', join(files, 'all2.csv')]);
    expect(patches()).toHaveLength(0);
  });
});

describe('history and undo', () => {
  it('records each write run, privately, per service; history lists them; undo takes the last back', async () => {
    const start = await quantities();
    expect((await petinv(['set', '--file', file('u.csv', 'petId,quantity\n40,440\n41,441\n')])).code).toBe(0);
    const folder = join(stateHome, 'petinv', 'history');
    const name = readdirSync(folder).find((entry) => entry.endsWith('.jsonl'));
    expect(statSync(join(folder, name as string)).mode & 0o777).toBe(0o600);
    const listed = JSON.parse((await petinv(['history', '--json'])).stdout);
    expect(listed[0]).toMatchObject({
      env: 'local',
      command: expect.stringContaining('set --file'),
      pets: 2,
      changes: expect.arrayContaining([{ petId: 40, before: start.get(40), after: 440 }]),
    });
    const tsv = await petinv(['history']);
    expect(tsv.stdout.split('\n')[0]).toBe(
      [listed[0].id, listed[0].at, 'local', listed[0].command, '2', ''].join('\t'),
    );
    const table = await runMain(['history', '--no-color'], { env, tty: true, columns: 160 });
    expect(table.stdout).toMatch(/RUN +WHEN \(UTC\) +ENV +COMMAND +PETS/);
    expect(table.stdout).toContain(listed[0].id);
    expect(table.stdout).toMatch(
      /\d+ runs? · http:\/\/127\.0\.0\.1:\d+\/v1 · petinv undo RUN takes one back/,
    );

    requests.length = 0;
    const undone = await petinv(['undo']);
    expect(undone.code, undone.stderr).toBe(0);
    expect(gets()).toEqual(['GET /v1/inventory']);
    expect(patches().sort()).toEqual(['PATCH /v1/inventory/40', 'PATCH /v1/inventory/41']);
    let now = await quantities();
    expect([now.get(40), now.get(41)]).toEqual([start.get(40), start.get(41)]);

    // An undo is a run too: undoing it redoes; its connections are set as a bulk run's are.
    expect((await petinv(['undo', '--pipelining', '0'])).code).toBe(2);
    expect((await petinv(['undo', '--concurrency', '1', '--pipelining', '1'])).code).toBe(0);
    now = await quantities();
    expect([now.get(40), now.get(41)]).toEqual([440, 441]);
  });

  it("undo after someone else changed one of the run's pets: that pet is kept, exit 11; --force writes it", async () => {
    const start = await quantities();
    await petinv(['set', '--file', file('v.csv', 'petId,quantity\n42,442\n43,443\n')]);
    const run = JSON.parse((await petinv(['history', '--json'])).stdout)[0].id as string;
    await petinv(['adjust', '43', '-3']);
    requests.length = 0;
    const dry = await petinv(['undo', run, '--dry-run']);
    expect(dry.code).toBe(11);
    expect(patches()).toEqual([]);
    const undone = await petinv(['undo', run]);
    expect(undone.code).toBe(11);
    expect(undone.stderr).toContain(`pet 43 holds 440 in local, not 443`);
    expect(patches()).toEqual(['PATCH /v1/inventory/42']);
    let now = await quantities();
    expect([now.get(42), now.get(43)]).toEqual([start.get(42), 440]);
    const forced = await petinv(['undo', run, '--force']);
    expect(forced.code).toBe(0);
    now = await quantities();
    expect(now.get(43)).toBe(start.get(43));
  });

  it('undo confirms on production like set: not confirmed, nothing is written (exit 10); --yes goes ahead', async () => {
    await petinv(['set', '45', '445']);
    const production = { ...env, PETINV_ENV: 'production' };
    requests.length = 0;
    const refused = await runMain(['undo'], { env: production, stdinTty: true, input: 'n\n' });
    expect(refused.code).toBe(10);
    expect(refused.stderr).toMatch(
      /Undo run \S+ \(set 45 445, at [\d-]+ [\d:]+ UTC, 1 pet\): 1 update in production\?/,
    );
    expect(patches()).toEqual([]);
    const confirmed = await runMain(['undo', '--yes'], { env: production, stdinTty: true });
    expect(confirmed.code, confirmed.stderr).toBe(0);
    expect(patches()).toEqual(['PATCH /v1/inventory/45']);
  });

  it('a damaged history is reported, never a reason for a write to fail', async () => {
    const folder = join(stateHome, 'petinv', 'history');
    const path = join(folder, readdirSync(folder).find((entry) => entry.endsWith('.jsonl')) as string);
    writeFileSync(path, `${readFileSync(path, 'utf8')}{not json\n`, { mode: 0o600 });
    const write = await petinv(['set', '44', '444']);
    expect(write.code).toBe(0);
    const table = await petinv(['history']);
    expect(table.code).toBe(0);
    expect(table.stderr).toMatch(
      /^petinv: warning: the history .* has a damaged line \(line \d+\), left out/,
    );
    const shown = await petinv(['history', '--json']);
    expect(JSON.parse(shown.stderr).warning.message).toMatch(/damaged line/);
    expect(JSON.parse(shown.stdout)[0]).toMatchObject({
      command: 'set 44 444',
      changes: [{ petId: 44, after: 444 }],
    });
  });
});

/**
 * A service holding pets 1 (10) and 2 (20) that answers a PATCH of pet 2 with `hello`, not the item, while
 * `hostile` is set; `appliesHostile` says whether it applied that update first. Resolves with the env that
 * reaches it, its stock, and a switch.
 */
async function startUnbelievableService(key: string, appliesHostile: boolean) {
  const stock = new Map([
    [1, 10],
    [2, 20],
  ]);
  const state = { hostile: false };
  const server = await startFakeServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      const reply = (text: string) => answer(200, text)(request, response);
      if (request.method === 'GET')
        return reply(
          JSON.stringify([...stock].map(([petId, quantity]) => ({ petId, quantity, status: 'available' }))),
        );
      const petId = Number(request.url?.split('/').at(-1));
      const { quantity } = JSON.parse(body) as { quantity: number };
      const hostile = state.hostile && petId === 2;
      if (!hostile || appliesHostile) stock.set(petId, quantity);
      reply(hostile ? 'hello' : JSON.stringify({ petId, quantity, status: 'available' }));
    });
  });
  const env = {
    PETINV_CONFIG_DIR: temporaryDirectory(),
    XDG_STATE_HOME: temporaryDirectory(),
    PETINV_ENV: 'staging',
    PETINV_BASE_URL: `${server.origin}/v1`,
    PETINV_API_KEY: key,
  };
  return { env, stock, state, close: () => server.close() };
}

describe('an undo whose write-backs were answered with a success that was not the item', () => {
  it('says to run that undo again, not to apply an input it never had', async () => {
    const service = await startUnbelievableService('undo-test-key', false);
    try {
      const own = service.env;
      expect((await runMain(['set', '-'], { env: own, input: '1 11\n2 21\n' })).code).toBe(0);
      const history = await runMain(['history', '--json'], { env: own });
      const [run] = JSON.parse(history.stdout) as { id: string }[];
      service.state.hostile = true;
      const undo = await runMain(['undo'], { env: own });
      expect(undo.code).toBe(8);
      expect(undo.stderr).toContain(
        `answered with a success that could not be taken for the item sent; it may have been applied: run petinv undo ${run?.id} again: a second send cannot apply one twice, and each pet is checked again`,
      );
    } finally {
      service.close();
    }
  });
});

describe('a bulk write answered with a success that was not the item, which the service did apply', () => {
  it('is in the history with the quantity sent, so undo takes it back too', async () => {
    // Applied, and answered with something that is not the item.
    const service = await startUnbelievableService('maybe-applied-key', true);
    service.state.hostile = true;
    try {
      const own = service.env;
      const set = await runMain(['set', '-'], { env: own, input: '1 11\n2 21\n' });
      expect(set.code).toBe(8);
      expect(set.stderr).toContain('1 changed, 0 already right, 1 failed (1 with outcome unknown');
      const history = await runMain(['history', '--json'], { env: own });
      const [run] = JSON.parse(history.stdout) as { changes: unknown[] }[];
      expect(run?.changes).toEqual([
        { petId: 1, before: 10, after: 11 },
        { petId: 2, before: 20, after: 21 },
      ]);
      service.state.hostile = false;
      const undo = await runMain(['undo'], { env: own });
      expect(undo.code, undo.stderr).toBe(0);
      expect([...service.stock]).toEqual([
        [1, 10],
        [2, 20],
      ]);
    } finally {
      service.close();
    }
  });
});
