import { readFileSync } from 'node:fs';
import { strFromU8, strToU8, unzipSync, zipSync } from 'fflate';
import { readSheet } from 'read-excel-file/universal';
import { describe, expect, it } from 'vitest';
import writeXlsxFile from 'write-excel-file/node';
import { runMain } from '../helpers/main';
import { useSheetService } from '../helpers/sheet-service';

/**
 * The count sheet, end to end against a real petinv serve: exported, filled in, reviewed and applied,
 * with a colleague changing pets between the steps; as CSV and as an Excel workbook.
 */
const KEY = 'count-sheet-key';
const BIG = '9223372036854775807';
const ROUNDED = '9007199254740993';
const { served, petinv, petinvBytes, petinvWithInput, file, env } = useSheetService(KEY, [
  { petId: '1', quantity: 5, status: 'available' },
  { petId: '2', quantity: 3, status: 'sold' },
  { petId: '11', quantity: 10, status: 'available' },
  { petId: '12', quantity: 4, status: 'pending' },
  { petId: ROUNDED, quantity: 1, status: 'sold' },
  { petId: BIG, quantity: 2, status: 'pending' },
]);
const patches = () => served.requests.filter((request) => request.startsWith('PATCH')).sort();
async function quantities(): Promise<Record<string, number>> {
  const list = (await petinv(['list'])).stdout.trim().split('\n');
  return Object.fromEntries(list.map((line) => [line.split('\t')[0], Number(line.split('\t')[2])]));
}
/** The counted cells filled in, by petId, in a CSV count sheet. */
const fill = (sheet: string, counts: Record<string, number>) =>
  sheet.replace(/^(\d+),(\w+),(\d+),$/gm, (row, petId: string) =>
    counts[petId] === undefined ? row : `${row}${counts[petId]}`,
  );

/** A `<c>` element of a sheet's XML, and one holding inline text. */
const cell = (reference: string, inner: string, type = '') =>
  `<c r="${reference}"${type && ` t="${type}"`}>${inner}</c>`;
const text = (reference: string, value: string) => cell(reference, `<is><t>${value}</t></is>`, 'inlineStr');

/**
 * A workbook as a program other than a spreadsheet writes one: each sheet's rows of `<c>` elements (a row
 * numbered by its first cell's reference), a sheet's `state` (hidden), and `calculation`, the workbook's
 * calcPr attributes. The first sheet's relationship is absolute, as some programs write it. Given `dates`,
 * the workbook counts days from that year, style 1 (`s="1"`) formats a cell as a date (m/d/yyyy), and
 * styles 2 on with the number formats `formats` (`s="2"` the first), and conditional formats' number
 * formats `conditional` (a rule's `dxfId="0"` the first; one starting with `<` is the dxf's own XML).
 */
function rawWorkbook(
  sheets: { name: string; state?: string; rows: string[][]; after?: string }[],
  calculation = '',
  activeTab = 0,
  dates?: '1900' | '1904',
  formats: string[] = [],
  conditional: string[] = [],
): Buffer {
  const number = (index: number) => index + 1;
  // A row's first element is its first cell's reference, and after a space the row's own attributes.
  const row = ([first = '', ...cells]: string[]) => {
    const [, reference = '', attributes = ''] = /^[A-Z]+(\d+)(.*)$/.exec(first) ?? [];
    return `<row r="${reference}"${attributes}>${cells.join('')}</row>`;
  };
  const parts = Object.fromEntries(
    sheets.map(({ rows, after = '' }, index) => [
      `xl/worksheets/sheet${number(index)}.xml`,
      strToU8(
        `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>${rows
          .map(row)
          .join('')}</sheetData>${after}</worksheet>`,
      ),
    ]),
  );
  return Buffer.from(
    zipSync({
      '[Content_Types].xml': strToU8(
        `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>${sheets
          .map(
            (_, index) =>
              `<Override PartName="/xl/worksheets/sheet${number(index)}.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>`,
          )
          .join('')}</Types>`,
      ),
      '_rels/.rels': strToU8(
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>',
      ),
      'xl/workbook.xml': strToU8(
        `<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><bookViews><workbookView activeTab="${activeTab}"/></bookViews><sheets>${sheets
          .map(
            ({ name, state }, index) =>
              `<sheet name="${name}" sheetId="${number(index)}"${state ? ` state="${state}"` : ''} r:id="rId${number(index)}"/>`,
          )
          .join('')}</sheets>${calculation && `<calcPr ${calculation}/>`}</workbook>`.replace(
          '<bookViews>',
          dates === '1904' ? '<workbookPr date1904="1"/><bookViews>' : '<bookViews>',
        ),
      ),
      'xl/_rels/workbook.xml.rels': strToU8(
        `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${sheets
          .map(
            (_, index) =>
              `<Relationship Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="${index === 0 ? '/xl/' : ''}worksheets/sheet${number(index)}.xml" Id="rId${number(index)}"/>`,
          )
          .join(
            '',
          )}${dates ? '<Relationship Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml" Id="rIdStyles"/>' : ''}</Relationships>`,
      ),
      ...(dates && {
        'xl/styles.xml': strToU8(
          `<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><numFmts>${formats
            .map(
              (code, index) =>
                `<numFmt numFmtId="${164 + index}" formatCode="${code.replaceAll('"', '&quot;')}"/>`,
            )
            .join('')}</numFmts><cellXfs><xf numFmtId="0"/><xf numFmtId="14" applyNumberFormat="1"/>${formats
            .map((_, index) => `<xf numFmtId="${164 + index}" applyNumberFormat="1"/>`)
            .join('')}</cellXfs><dxfs>${conditional
            .map((code) =>
              code.startsWith('<')
                ? `<dxf>${code}</dxf>`
                : `<dxf><numFmt numFmtId="${200 + conditional.indexOf(code)}" formatCode="${code}"/></dxf>`,
            )
            .join('')}</dxfs></styleSheet>`,
        ),
      }),
      // Excel, which calculates each formula it saves, lists them in a calculation chain.
      ...(calculation.includes('calcId') && {
        'xl/calcChain.xml': strToU8(
          '<calcChain xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"/>',
        ),
      }),
      ...parts,
    }),
  );
}

describe('list --count-sheet', () => {
  it('writes petId,status,expected,counted: expected the quantity now, counted empty; filters apply', async () => {
    const sheet = await petinv(['list', '--count-sheet']);
    expect(sheet).toMatchObject({ code: 0, stderr: '' });
    expect(sheet.stdout).toBe(
      `petId,status,expected,counted\n1,available,5,\n2,sold,3,\n11,available,10,\n12,pending,4,\n${ROUNDED},sold,1,\n${BIG},pending,2,\n`,
    );
    expect((await petinv(['list', '--count-sheet', '--status', 'sold', '--sort', 'quantity'])).stdout).toBe(
      `petId,status,expected,counted\n${ROUNDED},sold,1,\n2,sold,3,\n`,
    );
    for (const args of [['-o', 'json'], ['--fields', 'petId'], ['--no-headers'], ['--watch']]) {
      const refused = await petinv(['list', '--count-sheet', ...args]);
      expect(refused.code, args.join(' ')).toBe(2);
      expect(refused.stderr, args.join(' ')).toContain('--count-sheet ');
    }
    const terminal = await runMain(['list', '--count-sheet', '-o', 'xlsx'], { env: env(), tty: true });
    expect(terminal).toMatchObject({ code: 2, stdout: '' });
    expect(terminal.stderr).toContain('-o xlsx writes a workbook, which a terminal cannot show');
    expect((await petinv(['list', '-o', 'xlsx'])).stderr).toContain(
      'only petinv list --count-sheet writes a workbook',
    );
  });

  it('the recipe: a colleague changes pets after the export; the sheet keeps their counts (exit 11, named)', async () => {
    const exported = (await petinv(['list', '--count-sheet'])).stdout;
    // A colleague sells and restocks meanwhile.
    expect((await petinv(['adjust', '11', '+5'])).code).toBe(0);
    expect((await petinv(['set', '12', '0'])).code).toBe(0);
    const sheet = file('count.csv', fill(exported, { 1: 6, 11: 9, 12: 4, 2: 3 }));
    served.requests.length = 0;
    const review = await petinv(['set', '--file', sheet, '--dry-run']);
    expect(review.code, review.stderr).toBe(11);
    expect(review.stderr).toContain('pet 11 holds 15 in local, not 10 as expected');
    expect(review.stderr).toContain('pet 12 holds 0 in local, not 4 as expected');
    expect(review.stderr).toContain(
      'petinv: note: 2 rows left uncounted (counted is empty): nothing is sent for them\n',
    );
    expect(patches()).toEqual([]);
    const applied = await petinv(['set', '--file', sheet]);
    expect(applied.code, applied.stderr).toBe(11);
    expect(patches()).toEqual(['PATCH /v1/inventory/1']);
    // Pet 2 counted as it was: already right; the two pets left uncounted send nothing, and are counted.
    expect(applied.stderr).toMatch(
      /updated 1 of 4 pets .* 1 already right, 0 failed, 2 conflicts, 0 rows skipped, 2 not counted\n/,
    );
    expect(await quantities()).toMatchObject({ 1: 6, 11: 15, 12: 0 });
  });

  it('a count sheet whose expected column was deleted says its counts are written unchecked (QA: nothing said)', async () => {
    const exported = (await petinv(['list', '--count-sheet'])).stdout;
    const withoutExpected = fill(exported, { 1: 6 }).replace(/^(\w+),(\w+),\w*,/gm, '$1,$2,');
    expect(withoutExpected).toMatch(/^petId,status,counted\n1,available,6\n/);
    const before = (await quantities())[1] as number;
    expect((await petinv(['adjust', '1', '+2'])).code).toBe(0);
    const review = await petinv(['set', '--file', file('no-expected.csv', withoutExpected), '--dry-run']);
    expect(review.code, review.stderr).toBe(0);
    expect(review.stdout).toBe(`1: ${before + 2} → 6\n`);
    expect(review.stderr).toContain(
      'petinv: note: no expected column: each pet is set to its "counted" whatever it holds now, unchecked',
    );
    expect((await petinv(['set', '1', String(before)])).code).toBe(0);
  });

  it('a plan made from a count sheet carries expected as its from: a pet changed before the plan is kept', async () => {
    const exported = (await petinv(['list', '--count-sheet'])).stdout;
    const sheet = file('plan-count.csv', fill(exported, { 1: 8, 2: 8 }));
    // A colleague changes pet 2 between the export and the dry run: the plan must not take their 1 as its from.
    expect((await petinv(['set', '2', '1'])).code).toBe(0);
    const plan = await petinv(['set', '--file', sheet, '--dry-run', '-o', 'csv']);
    expect(plan.stdout).toMatch(/^petId,from,to,found\n1,6,8,true\n/);
    // Pet 2 is a conflict at the dry run (exit 11), left out of the plan or carried with its expected 3.
    expect(plan.code).toBe(11);
    expect([undefined, '2,3,8,true']).toContain(plan.stdout.split('\n').find((row) => row.startsWith('2,')));
    served.requests.length = 0;
    const applied = await petinv(['set', '--file', file('plan.csv', plan.stdout)]);
    expect([0, 11]).toContain(applied.code);
    expect(patches()).toEqual(['PATCH /v1/inventory/1']);
    expect(await quantities()).toMatchObject({ 1: 8, 2: 1 });
  });
});

describe('an Excel workbook', () => {
  it('-o xlsx writes the count sheet with petIds as text; filled in, set --file reads it by its header', async () => {
    const workbook = await petinvBytes(['list', '--count-sheet', '-o', 'xlsx']);
    expect(workbook.subarray(0, 4).toString('latin1')).toBe('PK\u0003\u0004');
    const rows = await readSheet(new Uint8Array(workbook).buffer, {
      parseNumber: (text) => ({ number: text }),
    });
    expect(rows[0]).toEqual(['petId', 'status', 'expected', 'counted']);
    // Text cells: exact to the last digit, whatever a spreadsheet does to numbers.
    expect(rows.map((row) => row[0])).toContain(BIG);
    expect(rows.map((row) => row[0])).toContain(ROUNDED);
    const now = await quantities();
    const filled = rows
      .slice(1)
      .map(([petId, status, expected]) => [
        { type: String, value: petId as string },
        status as string,
        { type: Number, value: Number((expected as { number: string }).number) },
        { type: Number, value: petId === BIG ? 20 : petId === '12' ? 30 : undefined },
      ]);
    // A petId a spreadsheet stored as a number: past 2^53 it is already rounded, and refused for its row;
    // with 16 digits below 2^53 it may have been (spreadsheets keep 15: LibreOffice saves 1000000000000001
    // as 1000000000000000, another pet's id), and is refused too.
    filled.push([{ type: Number, value: Number(ROUNDED) } as never, 'sold', 1 as never, 7 as never]);
    filled.push([{ type: Number, value: 1000000000000000 } as never, 'sold', 1 as never, 7 as never]);
    const path = file('count.xlsx', await writeXlsxFile([rows[0] as string[], ...filled]).toBuffer());
    served.requests.length = 0;
    const applied = await petinv(['set', '--file', path]);
    expect(applied.code).toBe(9);
    expect(applied.stderr).toContain(
      `row ${filled.length}: petId 9007199254740992: the spreadsheet rounded it: format the column as text (skipped)`,
    );
    expect(applied.stderr).toContain(
      `row ${filled.length + 1}: petId 1000000000000000: the spreadsheet may have rounded it (it keeps 15 digits of a number): format the column as text (skipped)`,
    );
    expect(patches()).toEqual(['PATCH /v1/inventory/12', `PATCH /v1/inventory/${BIG}`]);
    expect(await quantities()).toMatchObject({ [BIG]: 20, 12: 30, [ROUNDED]: now[ROUNDED] });
    // From stdin too, found by its bytes, not its name: all already right now, the rounded row skipped.
    const piped = await petinvWithInput(['set', '-'], readFileSync(path));
    expect(piped.code, piped.stderr).toBe(9);
    expect(piped.stderr).toContain('the spreadsheet rounded it');
    expect(piped.stderr).toMatch(/updated 0 of 2 pets .* 2 already right, .* 2 rows skipped, 4 not counted/);
  });

  it('a formula saved without its value, or an error value, is the bad row it is, not an empty cell', async () => {
    // As openpyxl writes a formula (no value: Excel computes it on opening) and LibreOffice an error value,
    // with the data from B2, the workbook's relationships absolute, and a last row holding only a formula.
    const rows = [
      ['B2', text('B2', 'petId'), text('C2', 'expected'), text('D2', 'counted')],
      ['B3', text('B3', '1'), cell('C3', '<v>5</v>'), cell('D3', '<f>5+7</f><v></v>')],
      ['B4', text('B4', '2'), cell('C4', '<f>1/0</f><v>#DIV/0!</v>', 'e'), cell('D4', '<v>4</v>')],
      ['B5', text('B5', '11'), cell('D5', '<f>"10"&amp;"0"</f><v>100</v>', 'str')],
      ['B6', cell('B6', '<f>B5+1</f>')],
      // A text formula whose saved result is empty, as Excel saves ="": a value, empty, so not counted.
      ['B7', text('B7', '12'), cell('D7', '<f>IF(1,"","")</f><v></v>', 'str')],
    ];
    const workbook = rawWorkbook(
      [
        { name: 'Count', rows },
        { name: 'Old &amp; done', rows: [] },
      ],
      'calcId="191029"',
    );
    const review = await petinv(['set', '--file', file('formulas.xlsx', workbook), '--dry-run']);
    expect(review.code, review.stderr).toBe(9);
    expect(review.stderr).toContain(
      'row 3 (pet 1): counted "=5+7" is a formula, not a number: recalculate the sheet, then paste the column as values (values only) (skipped)',
    );
    expect(review.stderr).toContain('row 4 (pet 2): expected "#DIV/0!" is not a whole number (skipped)');
    expect(review.stderr).toContain('row 6: petId "=B5+1" is a formula, not a number');
    expect(review.stderr).toContain('1 row left uncounted (counted is empty)');
    expect(review.stderr).toContain(
      'the workbook has 2 sheets: only the first, "Count", is read (not "Old & done")',
    );
    // A formula saved with its value by Excel (its calculation chain) is read as that value.
    expect(review.stdout, review.stderr).toMatch(/^11: \d+ → 100\n$/);
  });

  it('a value merged across rows is refused for each row it spans; hidden rows that are read are named (QA)', async () => {
    const rows = [
      ['A1', text('A1', 'petId'), text('B1', 'expected'), text('C1', 'counted'), text('D1', 'notes')],
      ['A2', text('A2', '1'), cell('B2', '<v>5</v>'), cell('C2', '<v>13</v>'), text('D2', 'top shelf')],
      ['A3', text('A3', '2'), cell('B3', '<v>6</v>')],
      ['A4 hidden="1"', text('A4', '11'), cell('C4', '<v>99</v>')],
      ['A5 hidden="1"', text('A5', '12')],
    ];
    // Notes merged across rows are nobody's count: no refusal for them.
    const after = '<mergeCells count="2"><mergeCell ref="C2:C3"/><mergeCell ref="D3:D5"/></mergeCells>';
    const review = await petinv([
      'set',
      '--file',
      file('merged.xlsx', rawWorkbook([{ name: 'Sheet1', rows, after }])),
      '--dry-run',
    ]);
    expect(review.code, review.stderr).toBe(9);
    for (const [row, pet] of [
      [2, 1],
      [3, 2],
    ])
      expect(review.stderr).toContain(
        `row ${row} (pet ${pet}): cells C2:C3 are merged across rows: which pets its value is for cannot be told; unmerge them (skipped)`,
      );
    expect(review.stderr).toContain(
      'petinv: note: 1 row hidden in the workbook (by hand or by a filter) is read all the same: row 4\n',
    );
    expect(review.stdout).toMatch(/^11: \d+ → 99\n$/);
  });

  it('formula values the workbook calls stale (XlsxWriter saves 0 for each, fullCalcOnLoad) are not read', async () => {
    const rows = [
      ['A1', text('A1', 'petId'), text('B1', 'expected'), text('C1', 'counted')],
      ['A2', text('A2', '1'), cell('C2', '<f>C3-1013</f><v>0</v>')],
      ['A3', text('A3', '11'), cell('C3', '<v>1013</v>')],
    ];
    const review = (name: string, calculation: string) =>
      petinv([
        'set',
        '--file',
        file(name, rawWorkbook([{ name: 'Sheet1', rows }], calculation)),
        '--dry-run',
      ]);
    const stale = await review('xlsxwriter.xlsx', 'fullCalcOnLoad="1"');
    expect(stale.code, stale.stderr).toBe(9);
    expect(stale.stderr).toContain('row 2 (pet 1): counted "=C3-1013" is a formula, not a number');
    expect(stale.stdout).toMatch(/^11: \d+ → 1013\n$/);
    // Saved by a program that calculates (no such request), the same value is the formula's result.
    const saved = await review('calculated.xlsx', 'calcId="191029"');
    expect(saved.code, saved.stderr).toBe(0);
    expect(saved.stdout).toMatch(/^1: \d+ → 0\n11: \d+ → 1013\n$/);
  });

  it('a saved value its formula contradicts was never calculated: LibreOffice saves XlsxWriter’s 0s again, without the request (QA)', async () => {
    const rows = [
      [
        'A1',
        text('A1', 'petId'),
        text('B1', 'expected'),
        text('C1', 'counted'),
        text('D1', 'shelf'),
        text('E1', 'back'),
      ],
      ['A2', text('A2', '1'), cell('B2', '<v>5</v>'), cell('C2', '<f aca="false">B2+1</f><v>0</v>')],
      [
        'A3',
        text('A3', '2'),
        cell('C3', '<f>SUM(D3:E3)</f><v>4</v>'),
        cell('D3', '<v>1</v>'),
        cell('E3', '<v>3</v>'),
      ],
      ['A4', text('A4', '11'), cell('C4', '<f>VLOOKUP(A4,Stock!A:B,2,FALSE)</f><v>7</v>')],
      [
        'A5',
        text('A5', '12'),
        cell('C5', '<f>($D$5+D5)*2-E5/2</f><v>3</v>'),
        cell('D5', '<v>1</v>'),
        cell('E5', '<v>2</v>'),
      ],
    ];
    const review = await petinv([
      'set',
      '--file',
      file('resaved.xlsx', rawWorkbook([{ name: 'Count', rows }], 'calcId="191029"')),
      '--dry-run',
    ]);
    expect(review.code, review.stderr).toBe(9);
    expect(review.stderr).toContain(
      'row 2 (pet 1): counted "=B2+1" is a formula, not a number: recalculate the sheet',
    );
    // Its sums and arithmetic agree, and a formula petinv cannot work out is read as Excel saved it.
    expect(review.stdout, review.stderr).toMatch(/^2: \d+ → 4\n11: \d+ → 7\n12: \d+ → 3\n$/);
    // Saved by another program (no calculation chain), that one's value is not believed, nor one built on it.
    rows.push(['A6', text('A6', '30'), cell('C6', '<f>C4+1</f><v>8</v>')]);
    // Text in arithmetic is Excel's #VALUE!, a division by an empty cell its #DIV/0!: not 0 (QA).
    rows.push(['A7', text('A7', '31'), cell('C7', '<f>D7*2</f><v>0</v>'), text('D7', '5')]);
    rows.push(['A8', text('A8', '32'), cell('C8', '<f>D8/E8</f><v>0</v>'), cell('D8', '<v>5</v>')]);
    const elsewhere = await petinv([
      'set',
      '--file',
      file('resaved-lo.xlsx', rawWorkbook([{ name: 'Count', rows }])),
      '--dry-run',
    ]);
    expect(elsewhere.stderr).toContain(
      'row 4 (pet 11): counted "=VLOOKUP(A4,Stock!A:B,2,FALSE)" is a formula',
    );
    expect(elsewhere.stderr).toContain('row 6 (pet 30): counted "=C4+1" is a formula');
    expect(elsewhere.stderr).toContain('row 7 (pet 31): counted "=D7*2" is a formula');
    expect(elsewhere.stderr).toContain('row 8 (pet 32): counted "=D8/E8" is a formula');
    expect(elsewhere.stdout, elsewhere.stderr).toMatch(/^2: \d+ → 4\n12: \d+ → 3\n$/);
  });

  it('a number a conditional format may hide (;;;) is refused: whether its condition holds is not read (QA)', async () => {
    const rows = [
      ['A1', text('A1', 'petId'), text('B1', 'expected'), text('C1', 'counted')],
      ['A2', text('A2', '1'), cell('B2', '<v>5</v>'), cell('C2', '<v>0</v>')],
      ['A3', text('A3', '2'), cell('B3', '<v>3</v>'), cell('C3', '<v>6</v>')],
      ['A4', text('A4', '11'), cell('C4', '<v>0</v>')],
    ];
    const after =
      '<conditionalFormatting sqref="C2:C3"><cfRule type="cellIs" dxfId="0" operator="equal"><formula>0</formula></cfRule></conditionalFormatting>';
    const workbook = rawWorkbook([{ name: 'count', rows, after }], '', 0, '1900', [], [';;;']);
    const review = await petinv(['set', '--file', file('hidden-zero.xlsx', workbook), '--dry-run']);
    expect(review.code, review.stderr).toBe(9);
    for (const [row, pet, value] of [
      [2, 1, 0],
      [3, 2, 6],
    ])
      expect(review.stderr).toContain(
        `row ${row} (pet ${pet}): counted holds ${value}, which its number format (;;;, when its condition holds) shows otherwise`,
      );
    expect(review.stdout, review.stderr).toMatch(/^11: \d+ → 0\n$/);
    // Excel's advice to hide zeros: a rule that turns them white (QA: sent as 0).
    const white = rawWorkbook(
      [{ name: 'count', rows, after }],
      '',
      0,
      '1900',
      [],
      ['<font><color rgb="FFFFFFFF"/></font>'],
    );
    const whiteReview = await petinv(['set', '--file', file('white-zero.xlsx', white), '--dry-run']);
    // A data bar shown instead of the value (QA: sent as it was stored).
    const bars =
      '<conditionalFormatting sqref="C2:C3"><cfRule type="dataBar" priority="1"><dataBar showValue="0"><cfvo type="min"/><cfvo type="max"/></dataBar></cfRule></conditionalFormatting>';
    const barred = rawWorkbook([{ name: 'count', rows, after: bars }], '', 0, '1900', [], []);
    const barReview = await petinv(['set', '--file', file('bars.xlsx', barred), '--dry-run']);
    expect(barReview.stderr).toContain('row 3 (pet 2): counted holds 6, which its number format (;;;');
    expect(whiteReview.stderr).toContain(
      'row 2 (pet 1): counted holds 0, which its number format ([White], when its condition holds)',
    );
  });

  it('a number in white text on no fill looks like an empty cell, and is refused (QA: sent as counted)', async () => {
    const styled = (reference: string, value: string, style: number) =>
      `<c r="${reference}" s="${style}"><v>${value}</v></c>`;
    const rows = [
      ['A1', text('A1', 'petId'), text('B1', 'expected'), text('C1', 'counted')],
      ['A2', text('A2', '1'), cell('B2', '<v>5</v>'), styled('C2', '7', 2)],
      ['A3', text('A3', '2'), styled('C3', '6', 3)],
      ['A4', text('A4', '11'), styled('C4', '4', 4)],
    ];
    const files = unzipSync(rawWorkbook([{ name: 'count', rows }], '', 0, '1900'));
    // Style 2: white (rgb); 3: white on a solid fill, which shows it; 4: "White, Background 1" (theme 0).
    const fonts =
      '<fonts><font><color theme="1"/></font><font><color rgb="FFFFFFFF"/></font><font><color theme="0"/></font></fonts>';
    const fills =
      '<fills><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="solid"><fgColor rgb="FF1F4E79"/></patternFill></fill></fills>';
    const xfs = '<xf fontId="1"/><xf fontId="1" fillId="1"/><xf fontId="2"/>';
    files['xl/styles.xml'] = strToU8(
      strFromU8(files['xl/styles.xml'] as Uint8Array)
        .replace('<cellXfs>', `${fonts}${fills}<cellXfs>`)
        .replace('</cellXfs>', `${xfs}</cellXfs>`),
    );
    const path = file('white-text.xlsx', Buffer.from(zipSync(files)));
    const review = await petinv(['set', '--file', path, '--dry-run']);
    expect(review.code, review.stderr).toBe(9);
    expect(review.stderr).toContain(
      'row 2 (pet 1): counted holds 7, which its number format ([White]General)',
    );
    expect(review.stderr).toContain(
      'row 4 (pet 11): counted holds 4, which its number format ([White]General)',
    );
    expect(review.stdout, review.stderr).toMatch(/^2: \d+ → 6\n$/);
  });

  it('a quantity of 16 digits or more is written as text, and refused from a number cell (a spreadsheet keeps 15)', async () => {
    const { countSheetWorkbook } = await import('../../src/output/count-sheet');
    const exported = await countSheetWorkbook([
      { petId: 7n, status: 'sold', quantity: 9007199254740991 },
      { petId: 8n, status: 'sold', quantity: 999999999999999 },
    ]);
    const rows = await readSheet(new Uint8Array(exported).buffer, {
      parseNumber: (text) => ({ number: text }),
    });
    expect(rows.slice(1).map((row) => row[2])).toEqual(['9007199254740991', { number: '999999999999999' }]);
    // As LibreOffice saves 1000000000000001 typed into a number cell.
    const typed = rawWorkbook([
      {
        name: 'count',
        rows: [
          ['A1', text('A1', 'petId'), text('B1', 'Expected'), text('C1', 'Counted')],
          ['A2', text('A2', '1'), cell('C2', '<v>1000000000000000</v>')],
          ['A3', text('A3', '2'), cell('B3', '<v>1.0000000000000001E+16</v>'), cell('C3', '<v>4</v>')],
        ],
      },
    ]);
    const review = await petinv(['set', '--file', file('rounded.xlsx', typed), '--dry-run']);
    expect(review.code).toBe(9);
    expect(review.stderr).toContain(
      'row 2 (pet 1): counted 1000000000000000: the spreadsheet may have rounded it (it keeps 15 digits of a number): format the column as text (skipped)',
    );
    expect(review.stderr).toContain('row 3 (pet 2): expected 1.0000000000000001E+16: the spreadsheet may');
  });

  it('a count typed into a cell formatted as a date is refused by the number it holds, not a date a day off (QA)', async () => {
    // read-excel-file makes a Date of such a cell; Excel shows 5 as 1900-01-05, the Date is 1900-01-04.
    for (const dates of ['1900', '1904'] as const) {
      const workbook = rawWorkbook(
        [
          {
            name: 'count',
            rows: [
              ['A1', text('A1', 'petId'), text('B1', 'expected'), text('C1', 'counted')],
              ['A2', text('A2', '1'), cell('B2', '<v>12</v>'), '<c r="C2" s="1"><v>5</v></c>'],
              ['A3', text('A3', '2'), cell('B3', '<v>24</v>'), '<c r="C3" s="1"><v>45000.5</v></c>'],
            ],
          },
        ],
        '',
        0,
        dates,
      );
      const review = await petinv(['set', '--file', file(`dates-${dates}.xlsx`, workbook), '--dry-run']);
      expect(review.code, dates).toBe(9);
      expect(review.stderr, dates).toContain(
        'row 2 (pet 1): counted holds 5, formatted as a date or time: format the column as a number, and check it (skipped)',
      );
      expect(review.stderr, dates).toContain('row 3 (pet 2): counted holds 45000.5, formatted as a date');
    }
  });

  it('a number its format shows otherwise is refused, a count shown as nothing not counted, an expected read as stored (QA)', async () => {
    // Styles 2 on: 0%; ;;; (nothing shown); "twelve"; 0;-0;;@ (zero hidden); an accounting zero, a dash;
    // [Red]#,##0; a scale, #,##0, (1234 shows 1); a condition, [<10]0;"many"; elapsed hours, [h].
    const formats = [
      '0%',
      ';;;',
      '"twelve"',
      '0;-0;;@',
      '#,##0;(#,##0);"-"',
      '[Red]#,##0',
      '#,##0,',
      '[<10]0;"many"',
      '[h]',
      // A currency in quotes, and the accounting format's dash for zero beside one: clear, so read (QA).
      '"$"#,##0',
      '_("$"* #,##0_);_("$"* \\(#,##0\\);_("$"* "-"_);_(@_)',
      // Excel's own accounting formats, en-US and de-DE (a dash and its placeholders), and a minus shown on
      // a positive (QA: $-5 sent as 5).
      '_("$"* #,##0_);_("$"* \\(#,##0\\);_("$"* "-"??_);_(@_)',
      '_-* #,##0\\ _€_-;\\-* #,##0\\ _€_-;_-* "-"??\\ _€_-;_-@_-',
      '"$"-#,##0',
    ];
    const row = (at: number, style: number, value: number, expectedStyle = 0) => [
      `A${at}`,
      text(`A${at}`, String(at - 1)),
      `<c r="B${at}" s="${expectedStyle}"><v>9</v></c>`,
      `<c r="C${at}" s="${style}"><v>${value}</v></c>`,
    ];
    const header = ['A1', text('A1', 'petId'), text('B1', 'expected'), text('C1', 'counted')];
    const rows = [header, row(2, 2, 7), row(3, 3, 3), row(4, 4, 4), row(5, 5, 0), row(6, 6, 0), row(7, 7, 8)];
    rows.push(
      row(8, 8, 1234),
      row(9, 9, 50),
      row(10, 10, 6),
      row(11, 0, 5, 3),
      row(12, 11, 5),
      row(13, 12, 0),
    );
    rows.push(row(14, 13, 0), row(15, 14, 0), row(16, 15, 5));
    // Text under `;;;` shows nothing too (QA: a count typed as text "5" was sent).
    rows.push([
      'A17',
      text('A17', '16'),
      '<c r="B17"><v>9</v></c>',
      '<c r="C17" s="3" t="inlineStr"><is><t>5</t></is></c>',
    ]);
    const workbook = rawWorkbook([{ name: 'count', rows }], '', 0, '1900', formats);
    const review = await petinv(['set', '--file', file('formats.xlsx', workbook), '--dry-run', '-o', 'csv']);
    expect(review.code, review.stderr).toBe(9);
    // An expected its format hides (;;;) is still the check (QA: it was read as empty, and the row unchecked).
    expect(review.stdout, review.stderr).toBe(
      'petId,from,to,found\n5,9,0,false\n6,9,8,false\n10,9,5,false\n13,9,0,false\n14,9,0,false\n',
    );
    for (const [at, value, format] of [
      [2, 7, '0%'],
      [4, 4, '"twelve"'],
      [8, 1234, '#,##0,'],
      [9, 50, '[<10]0;"many"'],
    ])
      expect(review.stderr).toContain(
        `row ${at} (pet ${Number(at) - 1}): counted holds ${value}, which its number format (${format}) shows otherwise: format the column as a number, and check it (skipped)`,
      );
    expect(review.stderr).toContain('row 10 (pet 9): counted holds 6, formatted as a date or time');
    // Read, so checked: pets 11 and 12 hold other than 9.
    expect(review.stderr).toMatch(/row 12: pet 11 holds \d+ in local, not 9 as expected: .*not set to 5 /);
    expect(review.stderr).toMatch(/row 13: pet 12 holds \d+ in local, not 9 as expected: .*not set to 0 /);
    expect(review.stderr).toContain(
      'row 16 (pet 15): counted holds 5, which its number format ("$"-#,##0) shows otherwise',
    );
    for (const [at, pet] of [
      [14, 13],
      [15, 14],
    ])
      expect(review.stderr).not.toContain(`row ${at} (pet ${pet})`);
    expect(review.stderr).toContain('3 rows left uncounted (counted is empty)');
  });

  it('a zero its format shows without a digit is not counted; a negative shown without its sign is refused (QA)', async () => {
    // Styles 2 on: #, #,###, ?, $# (a "$" for zero), 0;0 (-5 shows as 5), #,##0;-#,##0 (a sign: read).
    const formats = ['#', '#,###', '?', '"$"#', '0;0', '#,##0;-#,##0'];
    const row = (at: number, style: number, value: number) => [
      `A${at}`,
      text(`A${at}`, String(at - 1)),
      `<c r="B${at}"><v>9</v></c>`,
      `<c r="C${at}" s="${style}"><v>${value}</v></c>`,
    ];
    const header = ['A1', text('A1', 'petId'), text('B1', 'expected'), text('C1', 'counted')];
    const rows = [
      header,
      row(2, 2, 0),
      row(3, 3, 0),
      row(4, 4, 0),
      row(5, 5, 0),
      row(6, 6, -5),
      row(7, 7, -5),
    ];
    rows.push(row(8, 2, 12));
    const workbook = rawWorkbook([{ name: 'count', rows }], '', 0, '1900', formats);
    const review = await petinv(['set', '--file', file('zeros.xlsx', workbook), '--dry-run', '-o', 'csv']);
    // Pets 1 to 3 were sent as 0, wiping their stock, where the sheet shows them empty.
    // Pet 6's -5, shown with its sign, is read: serve refuses a negative quantity, so the plan leaves it out.
    expect(review.stdout).toBe('petId,from,to,found\n7,9,12,false\n');
    expect(review.stderr).not.toContain('row 7 (pet 6): counted holds');
    expect(review.stderr).toContain('3 rows left uncounted (counted is empty)');
    expect(review.stderr).toContain(
      'row 5 (pet 4): counted holds 0, which its number format ("$"#) shows otherwise',
    );
    expect(review.stderr).toContain(
      'row 6 (pet 5): counted holds -5, which its number format (0;0) shows otherwise',
    );
  });

  it('a second header further down the sheet refuses the workbook, as it does a CSV (QA: read by the first header)', async () => {
    const rows = [
      ['A1', text('A1', 'petId'), text('B1', 'counted')],
      ['A2', text('A2', '1'), cell('B2', '<v>13</v>')],
      ['A4', text('A4', 'Counted'), text('B4', 'Pet ID')],
      ['A5', cell('A5', '<v>3</v>'), cell('B5', '<v>5</v>')],
    ];
    const refused = await petinv([
      'set',
      '--file',
      file('late-header.xlsx', rawWorkbook([{ name: 'count', rows }])),
    ]);
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain(
      'bulk input: row 4 names its columns (a header), but it is not the first line',
    );
  });

  it('reads attributes in single quotes as XML allows, as read-excel-file does: a hidden sheet, a format (QA)', async () => {
    const singleQuoted = (workbook: Buffer) => {
      const parts = unzipSync(workbook);
      for (const name of Object.keys(parts).filter((part) => part.startsWith('xl/')))
        parts[name] = strToU8(strFromU8(parts[name] as Uint8Array).replace(/="([^"]*)"/g, "='$1'"));
      return Buffer.from(zipSync(parts));
    };
    const rows = (count: string, style = 0) => [
      ['A1', text('A1', 'petId'), text('B1', 'counted')],
      ['A2', text('A2', '1'), `<c r="B2"${style ? ` s="${style}"` : ''}><v>${count}</v></c>`],
    ];
    const hidden = rawWorkbook([
      { name: 'old', state: 'hidden', rows: rows('99') },
      { name: 'count', rows: rows('6') },
    ]);
    const refused = await petinv([
      'set',
      '--file',
      file('quoted-hidden.xlsx', singleQuoted(hidden)),
      '--dry-run',
    ]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`the workbook's first sheet, "old", is hidden`);
    const percent = rawWorkbook([{ name: 'count', rows: rows('24', 2) }], '', 0, '1900', ['0%']);
    const review = await petinv([
      'set',
      '--file',
      file('quoted-percent.xlsx', singleQuoted(percent)),
      '--dry-run',
    ]);
    expect(review.stderr).toContain('counted holds 24, which its number format (0%) shows otherwise');
  });

  it('a sheet set to show no zeros (showZeros="0") leaves a counted 0 not counted, as it looks (QA)', async () => {
    const rows = [
      ['A1', text('A1', 'petId'), text('B1', 'counted')],
      ['A2', text('A2', '1'), cell('B2', '<v>0</v>')],
      ['A3', text('A3', '2'), cell('B3', '<v>44</v>')],
    ];
    const after = '<sheetViews><sheetView showZeros="0" workbookViewId="0"/></sheetViews>';
    const workbook = rawWorkbook([{ name: 'count', rows, after }]);
    const review = await petinv(['set', '--file', file('no-zeros.xlsx', workbook), '--dry-run', '-o', 'csv']);
    expect(review.stdout).toMatch(/^petId,from,to,found\n2,\d+,44,true\n$/);
    expect(review.stderr).toContain('1 row left uncounted (counted is empty)');
  });

  it('a hidden or empty first sheet before the counted one, or one it was not saved showing, is refused, not read or passed over', async () => {
    const counted = [
      ['A1', text('A1', 'petId'), text('B1', 'counted')],
      ['A2', text('A2', '1'), cell('B2', '<v>6</v>')],
    ];
    const old = [
      ['A1', text('A1', 'petId'), text('B1', 'counted')],
      ['A2', text('A2', '1'), cell('B2', '<v>999</v>')],
    ];
    // Saved showing the second sheet (QA: a "Summary" put in front was read, the count sheet not).
    const showing = await petinv([
      'set',
      '--file',
      file(
        'showing.xlsx',
        rawWorkbook(
          [
            { name: 'old count', rows: old },
            { name: 'count', rows: counted },
          ],
          '',
          1,
        ),
      ),
    ]);
    expect(showing.code).toBe(2);
    expect(showing.stderr).toContain(
      `the workbook's first sheet, "old count", is not the one the workbook was saved showing, "count", and petinv reads the first sheet only (not "count")`,
    );
    for (const state of ['hidden', 'veryHidden']) {
      const hidden = await petinv([
        'set',
        '--file',
        file(
          `${state}.xlsx`,
          rawWorkbook([
            { name: 'old count', state, rows: old },
            { name: 'count', rows: counted },
          ]),
        ),
      ]);
      expect(hidden.code).toBe(2);
      expect(hidden.stderr).toContain(
        `the workbook's first sheet, "old count", is hidden, and petinv reads the first sheet only (not "count")`,
      );
    }
    const empty = await petinv([
      'set',
      '--file',
      file(
        'empty-first.xlsx',
        rawWorkbook([
          { name: 'Sheet1', rows: [] },
          { name: 'count', rows: counted },
        ]),
      ),
    ]);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain(`the workbook's first sheet, "Sheet1", is empty`);
    expect(patches()).toEqual([]);
  });

  it('refuses a workbook that unpacks to more than 256 MiB before unpacking it (a zip bomb)', async () => {
    const workbook = rawWorkbook([
      { name: 'count', rows: [['A1', text('A1', 'petId'), text('B1', 'counted')]] },
    ]);
    // Every entry says it unpacks to 300 MB (local headers at +22, the central directory's at +24).
    for (const [signature, at] of [
      [0x04034b50, 22],
      [0x02014b50, 24],
    ] as const)
      for (let offset = 0; offset < workbook.length - 4; offset++)
        if (workbook.readUInt32LE(offset) === signature) workbook.writeUInt32LE(300_000_000, offset + at);
    const refused = await petinv(['set', '--file', file('bomb.xlsx', workbook), '--dry-run']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('the workbook cannot be read (it unpacks to more than 256 MiB)');
  });

  it('refuses other binary files in a line that names them, sending nothing (exit 2)', async () => {
    const zip = (...names: string[]) =>
      Buffer.concat([Buffer.from('PK\u0003\u0004', 'latin1'), Buffer.from(names.join('\u0000'), 'latin1')]);
    const cases: [string, Buffer, RegExp][] = [
      [
        'count.ods',
        zip('mimetype', 'application/vnd.oasis.opendocument.spreadsheet'),
        /OpenDocument spreadsheet \(\.ods/,
      ],
      [
        'count.xls',
        Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0, 0]),
        /old Excel workbook \(\.xls\)/,
      ],
      ['count.numbers', zip('Index/Document.iwa'), /Apple Numbers/],
      ['count.pdf', Buffer.from('%PDF-1.7\n%\u00e2\u00e3\n', 'latin1'), /PDF document/],
      ['count.zip', zip('count.csv'), /zip archive/],
      ['count.bin', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0x0d]), /binary file, not text/],
    ];
    served.requests.length = 0;
    for (const [name, bytes, what] of cases) {
      const result = await petinv(['set', '--file', file(name, bytes)]);
      expect(result.code, name).toBe(2);
      expect(result.stderr, name).toMatch(what);
      expect(result.stderr, name).toContain('save it as CSV');
      expect(result.stderr.split('\n'), name).toHaveLength(2);
    }
    expect(served.requests.filter((request) => !request.startsWith('GET'))).toEqual([]);
  });
});

describe('sheets as spreadsheets save them', () => {
  it('headers in other words and languages, Windows-1252 with a notice; never read by position', async () => {
    served.requests.length = 0;
    const counted = await petinv(['set', '--file', file('counted.csv', 'Counted,Pet #\n41,1\n42,2\n')]);
    expect(counted.code, counted.stderr).toBe(0);
    expect(await quantities()).toMatchObject({ 1: 41, 2: 42 });
    const latin = file('latin.csv', Buffer.from('Quantité comptée;Animal\r\n43;1\r\n', 'latin1'));
    const windows = await petinv(['set', '--file', latin]);
    expect(windows.code, windows.stderr).toBe(0);
    expect(windows.stderr).toContain('petinv: note: the input is not valid UTF-8: read as Windows-1252');
    for (const [name, text] of [
      ['qty.csv', 'Qty,N°\n44,1\n'],
      ['pets-id.csv', "Pet's ID,Qty\n1,45\n"],
    ]) {
      const result = await petinv(['set', '--file', file(name as string, text as string)]);
      expect(result.code, `${name}: ${result.stderr}`).toBe(0);
    }
    expect(await quantities()).toMatchObject({ 1: 45 });
    served.requests.length = 0;
    const unknown = await petinv(['set', '--file', file('unknown.csv', 'Artikel,Menge\n1,5\n')]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(
      /^petinv: bulk input: the first line reads as a header with columns "Artikel", "Menge", but none of them names the pet; petinv reads a pet column \(petid, id, pet, petsid, …\)/,
    );
    expect(patches()).toEqual([]);
  });

  it('a bad row names its spreadsheet row and pet, a line break in a note not shifting it', async () => {
    const sheet = 'petId,counted,notes\n1,5,"shelf 3,\ntop"\n2,12.5,x\n11,"1,000",\n';
    const result = await petinv(['set', '--file', file('rows.csv', sheet), '--strict']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('petinv: row 3 (pet 2): counted "12.5" is not a whole number\n');
    expect(result.stderr).toContain(
      'petinv: row 4 (pet 11): counted "1,000" could be 1.000 (3 decimals) or 1000 (a thousands separator): write the whole number meant\n',
    );
  });
});
