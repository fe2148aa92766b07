import { describe, expect, it } from 'vitest';
import { type Column, defuseFormula, exportRows } from '../../src/output/exporter';

/** OWASP's advice on CSV injection: text a spreadsheet would run gets a leading `'`; numbers never do. */
describe('defuseFormula and the TSV and CSV writers', () => {
  it.each([
    ['=1+1', "'=1+1"],
    ['+1', "'+1"],
    ['-1', "'-1"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\tx', "'\tx"],
    ['\rx', "'\rx"],
    ['a=1', 'a=1'],
    ['', ''],
    ["'quoted", "'quoted"],
  ])('%j', (text, defused) => {
    expect(defuseFormula(text)).toBe(defused);
  });

  type Row = { text: string; count: number; id: bigint };
  const columns: Column<Row>[] = [
    { key: 'text', heading: 'TEXT', value: (row) => row.text },
    { key: 'count', heading: 'COUNT', value: (row) => row.count },
    { key: 'id', heading: 'ID', value: (row) => row.id },
  ];
  const rows: Row[] = [
    { text: '=cmd|" /C calc"!A0', count: -5, id: -9007199254740993n },
    { text: '\t-tab', count: 0, id: 1n },
    { text: '\r+cr', count: 3, id: 2n },
  ];
  const options = { headers: true, color: false, pretty: false };

  it('CSV: text defused, then quoted where it must be; numbers as they are', () => {
    expect(exportRows(columns, { ...options, format: 'csv' }, rows)).toBe(
      `text,count,id\n"'=cmd|"" /C calc""!A0",-5,-9007199254740993\n'\t-tab,0,1\n"'\r+cr",3,2\n`,
    );
  });

  it('TSV: text defused, then its tab and carriage return escaped; numbers as they are', () => {
    expect(exportRows(columns, { ...options, format: 'tsv' }, rows)).toBe(
      `'=cmd|" /C calc"!A0\t-5\t-9007199254740993\n'\\t-tab\t0\t1\n'\\r+cr\t3\t2\n`,
    );
  });

  it('JSON keeps the text exactly: it is data, not a sheet', () => {
    expect(exportRows(columns, { ...options, format: 'json' }, rows.slice(0, 1))).toBe(
      '[{"text":"=cmd|\\" /C calc\\"!A0","count":-5,"id":-9007199254740993}]\n',
    );
  });
});
