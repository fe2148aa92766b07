import { execFile, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeEach, describe, expect, it } from 'vitest';
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
  { petId: '5', quantity: 6, status: 'available' },
  { petId: '6', quantity: 8, status: 'available' },
]);
const patches = () => served.requests.filter((request) => request.startsWith('PATCH'));

/** Runs a Python script that writes the workbook `name` (its path is sys.argv[1]); the path. */
async function written(name: string, script: string): Promise<string> {
  const path = join(directory(), name);
  await promisify(execFile)(python as string, ['-c', script, path], { encoding: 'utf8' });
  return path;
}

/** openpyxl: a first sheet of these rows (None for an empty cell), and number formats by cell (`C2`). */
const openpyxlRows = (rows: unknown[][], formats: Record<string, string> = {}) => `import openpyxl, sys
book = openpyxl.Workbook()
sheet = book.active
for row in ${JSON.stringify(rows).replaceAll('null', 'None')}:
    sheet.append(row)
for reference, code in ${JSON.stringify(formats)}.items():
    sheet[reference].number_format = code
book.save(sys.argv[1])`;

describe('openpyxl and XlsxWriter (skipped: not installed)', () => {
  // Skipped as each test starts, not the whole file: vitest runs no afterAll of a file whose every test is
  // skipped, and the file's temporary directories (the setup files', the service's) would be left behind.
  beforeEach((context) => {
    if (!python) context.skip();
  });

  it('a number openpyxl writes in white on no fill is refused; on a fill it shows, and is read', async () => {
    const path = await written(
      'white.xlsx',
      `import openpyxl, sys
from openpyxl.styles import Font, PatternFill
book = openpyxl.Workbook()
sheet = book.active
for row in [['petId', 'expected', 'counted'], [1, 5, 7], [2, 3, 6]]:
    sheet.append(row)
sheet['C2'].font = Font(color='FFFFFFFF')
sheet['C3'].font = Font(color='FFFFFFFF')
sheet['C3'].fill = PatternFill('solid', fgColor='FF1F4E79')
book.save(sys.argv[1])`,
    );
    const review = await petinv(['set', '--file', path, '--dry-run']);
    expect(review.code, review.stderr).toBe(9);
    expect(review.stderr).toContain(
      'row 2 (pet 1): counted holds 7, which its number format ([White]General)',
    );
    expect(review.stdout, review.stderr).toMatch(/^2: 3 → 6\n$/);
  });

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

  it('attributes in single quotes (valid XML, read by read-excel-file) hide no hidden sheet, formula or format from petinv’s checks', async () => {
    const build = `import openpyxl, sys
book = openpyxl.Workbook()
old = book.active
old.title = "old's count"
old.append(['petId', 'counted'])
old.append([1, 999])
old.sheet_state = 'hidden'
sheet = book.create_sheet('count')
for row in [['petId', 'expected', 'counted'], [1, 5, '=5+7'], [2, 3, 7], [3, 10, 11], [4, 4, 0]]:
    sheet.append(row)
sheet['C3'].number_format = '0%'
sheet['C5'].number_format = '#,##0;-#,##0;'
book.active = 1
`;
    served.requests.length = 0;
    // Every part: the hidden first sheet is found in workbook.xml, and refused.
    const hidden = await petinv(['set', '--file', await written('hidden.xlsx', build + singleQuoted('xml'))]);
    expect(hidden.code, hidden.stderr).toBe(2);
    expect(hidden.stderr).toContain(
      `the workbook's first sheet, "old's count", is hidden, and petinv reads the first sheet only (not "count")`,
    );
    // The sheet's part, its styles and the relationships, with the count sheet in front.
    const counted = build.replace('book.active = 1', "book.move_sheet('count', -1)\nbook.active = 0");
    const path = await written('counted.xlsx', counted + singleQuoted('worksheets|styles|rels'));
    const review = await petinv(['set', '--file', path, '--dry-run', '-o', 'csv']);
    expect(review.stderr).not.toContain('no r attribute');
    expect(review.code, review.stderr).toBe(9);
    expect(review.stderr).toContain('row 2 (pet 1): counted "=5+7" is a formula, not a number');
    expect(review.stderr).toContain(
      'row 3 (pet 2): counted holds 7, which its number format (0%) shows otherwise: format the column as a number, and check it (skipped)',
    );
    expect(review.stderr).toContain('1 row left uncounted (counted is empty)');
    expect(review.stdout).toBe('petId,from,to,found\n3,10,11,true\n');
    expect(patches()).toEqual([]);
  });

  it('a counted 0 its format shows as nothing (#, #,###, ?) is not counted; a negative shown without its minus is refused (QA: sent 0)', async () => {
    const rows = [
      ['petId', 'expected', 'counted'],
      [1, 5, 0],
      [2, 0, 7],
      [3, 10, 0],
      [4, 4, -5],
      [5, 6, 0],
      [6, 8, 0],
    ];
    const formats = { C2: '#', B3: '#', C3: '#,###', C4: '?', C5: '0;0', C6: '#,###', C7: '#,##0;-#,##0;' };
    const path = await written('zeros.xlsx', openpyxlRows(rows, formats));
    served.requests.length = 0;
    const review = await petinv(['set', '--file', path, '--dry-run', '-o', 'csv']);
    expect(review.code, review.stderr).toBe(9);
    // An expected 0 its format hides is still the check, read as stored: pet 2 is a conflict.
    expect(review.stderr).toContain('pet 2 holds 3 in local, not 0 as expected');
    expect(review.stderr).toContain('4 rows left uncounted (counted is empty)');
    expect(review.stderr).toContain(
      'row 5 (pet 4): counted holds -5, which its number format (0;0) shows otherwise: format the column as a number, and check it (skipped)',
    );
    expect(patches()).toEqual([]);
  });

  it('an exponent in a built-in format (ids 11 and 48, as openpyxl and Excel save them) is refused as a custom one is', async () => {
    const rows = [
      ['petId', 'counted'],
      [1, 12],
      [2, 7],
      [3, 9],
    ];
    const formats = { B2: '0.00E+00', B3: '##0.0E+0' };
    const review = await petinv([
      'set',
      '--file',
      await written('exponents.xlsx', openpyxlRows(rows, formats)),
      '--dry-run',
    ]);
    expect(review.code, review.stderr).toBe(9);
    for (const [row, value, format] of [
      [2, 12, '0.00E+00'],
      [3, 7, '##0.0E+0'],
    ])
      expect(review.stderr).toContain(
        `row ${row} (pet ${Number(row) - 1}): counted holds ${value}, which its number format (${format}) shows otherwise`,
      );
    expect(review.stdout).toMatch(/^3: \d+ → 9\n$/);
  });

  it('a chart sheet in front of the counted sheet is refused as a chart, not as a workbook that cannot be read (QA)', async () => {
    const path = await written(
      'chart-first.xlsx',
      `import sys, xlsxwriter
book = xlsxwriter.Workbook(sys.argv[1])
chartsheet = book.add_chartsheet('Chart')
sheet = book.add_worksheet('count')
for index, row in enumerate([['petId', 'counted'], [1, 6], [2, 7]]):
    sheet.write_row(index, 0, row)
chart = book.add_chart({'type': 'column'})
chart.add_series({'values': '=count!$B$2:$B$3'})
chartsheet.set_chart(chart)
book.close()`,
    );
    served.requests.length = 0;
    const refused = await petinv(['set', '--file', path]);
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toBe(
      `petinv: bulk input: the workbook's first sheet, "Chart", is a chart, not a sheet of rows, and petinv reads the first sheet only (not "count"): move the sheet you counted to the front, and save it again. Nothing was sent (run petinv help set)\n`,
    );
    expect(patches()).toEqual([]);
  });
});

/**
 * After a script that makes an openpyxl `book`: the workbook saved to sys.argv[1] with the XML parts whose
 * names match `parts` rewritten with their attributes in single quotes (`r='A1'`), as XML allows and
 * read-excel-file reads.
 */
const singleQuoted = (parts: string) => `
import io, re, zipfile
saved = io.BytesIO()
book.save(saved)
with zipfile.ZipFile(saved) as source, zipfile.ZipFile(sys.argv[1], 'w') as target:
    for item in source.infolist():
        data = source.read(item.filename).decode('utf8')
        if re.search(${JSON.stringify(parts)}, item.filename):
            data = re.sub(r'(\\s[\\w:.-]+)="([^"]*)"', lambda m: m[1] + "='" + m[2].replace("'", '&apos;') + "'", data)
            assert '="' not in data
        target.writestr(item, data)`;
