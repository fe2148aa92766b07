import { execFile, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { useSheetService } from '../helpers/sheet-service';

/**
 * Workbooks as Python's openpyxl and XlsxWriter write them (Debian: python3-openpyxl, python3-xlsxwriter),
 * when installed: what petinv's own checks of a workbook's XML must see as read-excel-file reads it.
 */
const python = ['python3', '/usr/bin/python3'].find(
  (command) => spawnSync(command, ['-c', 'import openpyxl, xlsxwriter'], { stdio: 'ignore' }).status === 0,
);

const KEY = 'writers-key';
const { served, petinv, directory } = useSheetService(KEY, [
  { petId: '1', quantity: 5, status: 'available' },
  { petId: '2', quantity: 3, status: 'sold' },
  { petId: '3', quantity: 10, status: 'available' },
  { petId: '4', quantity: 4, status: 'pending' },
]);
const patches = () => served.requests.filter((request) => request.startsWith('PATCH'));

/** Runs a Python script that writes the workbook `name` (its path is sys.argv[1]); the path. */
async function written(name: string, script: string): Promise<string> {
  const path = join(directory(), name);
  await promisify(execFile)(python as string, ['-c', script, path], { encoding: 'utf8' });
  return path;
}

/** openpyxl: a first sheet of these rows (None for an empty cell), each cell's number format by column. */
const openpyxlRows = (rows: unknown[][], formats: Record<string, string> = {}) => `import openpyxl, sys
book = openpyxl.Workbook()
sheet = book.active
for row in ${JSON.stringify(rows).replaceAll('null', 'None')}:
    sheet.append(row)
for column, code in ${JSON.stringify(formats)}.items():
    for cell in sheet[column][1:]:
        cell.number_format = code
book.save(sys.argv[1])`;

describe.skipIf(!python)('openpyxl and XlsxWriter (skipped: not installed)', () => {
  it('a second header further down the sheet refuses the workbook, as it does a CSV (QA: read by the first header)', async () => {
    const path = await written(
      'late-header.xlsx',
      openpyxlRows([['petId', 'counted'], [1, 13], [2, 25], [], ['Counted', 'Pet ID'], [3, 5], [4, 6]]),
    );
    served.requests.length = 0;
    const refused = await petinv(['set', '--file', path]);
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain(
      "bulk input: row 5 names its columns (a header), but it is not the first line, so the rows below it could be read as other pets' numbers",
    );
    expect(refused.stderr).toContain('Nothing was sent');
    expect(patches()).toEqual([]);
    // The header again, in its own columns, is a bad row as in a CSV, not a refusal.
    const again = await written(
      'header-again.xlsx',
      openpyxlRows([
        ['petId', 'counted'],
        [1, 13],
        ['petId', 'counted'],
        [2, 25],
      ]),
    );
    const review = await petinv(['set', '--file', again, '--dry-run']);
    expect(review.code, review.stderr).toBe(9);
    expect(review.stderr).toContain('row 3: the header again (skipped)');
  });
});
