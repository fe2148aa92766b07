import { execFile, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { temporaryDirectory } from '../helpers/serve';
import { useSheetService } from '../helpers/sheet-service';

/**
 * Workbooks another program wrote or reads: Python's openpyxl and LibreOffice, when installed (Debian:
 * python3-openpyxl, libreoffice-calc-nogui). test/cli/count-sheet.test.ts covers the same behaviour with
 * workbooks made by the libraries petinv uses, so nothing is untested where these are absent.
 */
const python = ['python3', '/usr/bin/python3'].find(
  (command) => spawnSync(command, ['-c', 'import openpyxl'], { stdio: 'ignore' }).status === 0,
);
const soffice = spawnSync('soffice', ['--version'], { stdio: 'ignore' }).status === 0;
const xlsxwriter =
  python !== undefined && spawnSync(python, ['-c', 'import xlsxwriter'], { stdio: 'ignore' }).status === 0;

const KEY = 'interop-key';
const BIG = '9223372036854775807';
const { served, petinv, petinvBytes, file, directory } = useSheetService(KEY, [
  { petId: '1', quantity: 5, status: 'available' },
  { petId: BIG, quantity: 2, status: 'pending' },
]);
const exportWorkbook = async (name: string) =>
  file(name, await petinvBytes(['list', '--count-sheet', '-o', 'xlsx']));
const runPython = (script: string, ...args: string[]) =>
  promisify(execFile)(python as string, ['-c', script, ...args], { encoding: 'utf8' });

describe.skipIf(!python)('openpyxl (skipped: python3-openpyxl is not installed)', () => {
  it('reads the exported count sheet: petIds are text cells, exact; a sheet it fills in is applied', async () => {
    const exported = await exportWorkbook('export.xlsx');
    const read = await runPython(
      `import openpyxl, sys, json
sheet = openpyxl.load_workbook(sys.argv[1]).active
print(json.dumps([[c.value for c in row] + [row[0].data_type] for row in sheet.iter_rows()]))`,
      exported,
    );
    expect(JSON.parse(read.stdout)).toEqual([
      ['petId', 'status', 'expected', 'counted', 's'],
      ['1', 'available', 5, null, 's'],
      [BIG, 'pending', 2, null, 's'],
    ]);
    const filled = join(directory(), 'filled.xlsx');
    await runPython(
      `import openpyxl, sys
book = openpyxl.load_workbook(sys.argv[1])
sheet = book.active
sheet['D2'] = 9
sheet['D3'] = 12
book.save(sys.argv[2])`,
      exported,
      filled,
    );
    const applied = await petinv(['set', '--file', filled]);
    expect(applied.code, applied.stderr).toBe(0);
    expect((await petinv(['list'])).stdout).toBe(`1\tavailable\t9\n${BIG}\tpending\t12\n`);
  });
});

describe.skipIf(!soffice)('LibreOffice (skipped: libreoffice-calc-nogui is not installed)', () => {
  const convert = (path: string, to: string) =>
    promisify(execFile)(
      'soffice',
      ['--headless', '--convert-to', to, '--outdir', join(directory(), to), path],
      {
        env: { ...process.env, HOME: temporaryDirectory() },
      },
    );

  it('a workbook LibreOffice saved is read; its .ods is refused in a line, nothing sent', {
    timeout: 120_000,
  }, async () => {
    const exported = await exportWorkbook('count.xlsx');
    await convert(exported, 'xlsx');
    const resaved = join(directory(), 'xlsx', 'count.xlsx');
    expect(readFileSync(resaved).equals(readFileSync(exported))).toBe(false);
    const review = await petinv(['set', '--file', resaved, '--dry-run']);
    // Nothing counted yet: every row is left uncounted, and nothing would be sent.
    expect(review.code, review.stderr).toBe(0);
    expect(review.stderr).not.toContain('rounded');
    await convert(exported, 'ods');
    served.requests.length = 0;
    const ods = await petinv(['set', '--file', join(directory(), 'ods', 'count.ods')]);
    expect(ods.code).toBe(2);
    expect(ods.stderr).toMatch(
      /^petinv: bulk input is an OpenDocument spreadsheet \(\.ods, LibreOffice\): save it as CSV/,
    );
    expect(ods.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(served.requests).toEqual([]);
  });

  it.skipIf(!xlsxwriter)(
    'XlsxWriter’s formulas saved again by LibreOffice, which did not recalculate them, are refused, not read as 0 (QA)',
    {
      timeout: 120_000,
    },
    async () => {
      const made = join(directory(), 'formulas.xlsx');
      await runPython(
        `import sys, xlsxwriter
book = xlsxwriter.Workbook(sys.argv[1])
sheet = book.add_worksheet('count')
sheet.write_row(0, 0, ['petId', 'expected', 'counted'])
sheet.write_string(1, 0, '1')
sheet.write_number(1, 1, 5)
sheet.write_formula(1, 2, '=B2+4')
book.close()`,
        made,
      );
      await convert(made, 'xlsx');
      const review = await petinv(['set', '--file', join(directory(), 'xlsx', 'formulas.xlsx'), '--dry-run']);
      expect(review.code, review.stderr).toBe(9);
      expect(review.stderr).toContain('row 2 (pet 1): counted "=B2+4" is a formula, not a number');
    },
  );
});
