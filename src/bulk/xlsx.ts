import { readSheet } from 'read-excel-file/universal';
import { usageError } from '../errors';
import { plural } from '../output/plural';
import { printable } from '../printable';
import type { BulkInput } from './entries';
import { quoted, spreadsheetNumberProblem } from './numbers';
import { fromCells, InputCollector, lateHeader } from './rows';
import { readHeader } from './sheet';
import { inspectWorkbook } from './xlsx-cells';

/**
 * An Excel workbook's first sheet, read by its header as a CSV sheet is. Numbers come as the text the
 * workbook stores: a petId or quantity stored as a number of over 15 digits may be rounded; its row is refused
 * (numbers.ts).
 */

/** A number cell: the text the workbook stores for it (`5`, `9.2233720368547758E+18`). */
type NumberCell = { number: string };
type Cell = string | NumberCell | boolean | Date | null;

function cellText(cell: Cell): string {
  if (cell instanceof Date) return cell.toISOString().slice(0, 10);
  return typeof cell === 'object' && cell !== null ? cell.number : String(cell ?? '');
}

const READ_OPTIONS = { parseNumber: (text: string): NumberCell => ({ number: text }), trim: false };

export async function readWorkbook(bytes: Buffer): Promise<BulkInput> {
  let sheet: Cell[][];
  let workbook: ReturnType<typeof inspectWorkbook>;
  try {
    const data = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer;
    workbook = inspectWorkbook(bytes);
    // read-excel-file fails on a chart sheet, refused below.
    sheet = workbook.chart ? [] : ((await readSheet(data, READ_OPTIONS)) as Cell[][]);
  } catch (error) {
    throw usageError(
      `bulk input: the workbook cannot be read (${printable((error as Error).message, 120)}); save it again as .xlsx, or as CSV. Nothing was sent`,
    );
  }
  // The cells read as empty that hold a formula's text or an error (xlsx-cells.ts), in rows that may hold nothing else.
  const { unread, formatted, sheets, firstHidden, chart, shown, date1904, merged, hiddenRows } = workbook;
  const firstName = quoted(sheets[0] ?? '');
  const others = `${sheets.slice(1, 4).map(quoted).join(', ')}${sheets.length > 4 ? ', …' : ''}`;
  const readFirstOnly = (what: string, fix = 'move the sheet you counted to the front, and save it again') =>
    usageError(
      `bulk input: the workbook's first sheet, ${firstName}, is ${what}, and petinv reads the first sheet only (not ${others}): ${fix}. Nothing was sent`,
    );
  if ((firstHidden || chart) && sheets.length > 1)
    throw readFirstOnly(chart ? 'a chart, not a sheet of rows' : 'hidden');
  // Saved showing another sheet: the one counted, perhaps, while the first is a summary or an old count.
  if (shown > 0 && sheets[shown] !== undefined)
    throw readFirstOnly(
      `not the one the workbook was saved showing, ${quoted(sheets[shown])}`,
      'move the sheet you counted to the front, and save the workbook showing it',
    );
  const rowCount = Math.max(sheet.length, ...[...unread.keys()].map((row) => row + 1));
  sheet = Array.from({ length: rowCount }, (_, row) => {
    const cells = sheet[row] ?? [];
    const found = unread.get(row) ?? new Map<number, string>();
    const width = Math.max(cells.length, ...[...found.keys()].map((column) => column + 1));
    return Array.from({ length: width }, (_, column) => found.get(column) ?? cells[column] ?? null);
  });
  const rows = new InputCollector();
  const first = sheet.findIndex((row) => row.some((cell) => cellText(cell).trim() !== ''));
  if (first === -1) {
    if (sheets.length > 1) throw readFirstOnly('empty');
    return rows.finish('row');
  }
  const header = readHeader((sheet[first] as Cell[]).map(cellText), ',');
  rows.useHeader(header);
  if (sheets.length > 1)
    rows.notices.push(
      `the workbook has ${sheets.length} sheets: only the first, ${firstName}, is read (not ${others})`,
    );
  const read = [header.petId, header.counted, header.expected, ...header.alsoCounts];
  // Which of its rows a merged value counts cannot be told: every row it spans is refused.
  const mergedAcross = (ref: string) =>
    `cells ${ref} are merged across rows: which pets its value is for cannot be told; unmerge them`;
  const mergedRows = new Map<number, string>();
  for (const { ref, top, bottom, left, right } of merged)
    if (read.some((column) => column !== undefined && column >= left && column <= right))
      for (let row = top; row <= bottom; row++) mergedRows.set(row, ref);
  /**
   * Why the cell in `column` may not hold what was typed: a number of too many digits (numbers.ts), or one
   * its format shows otherwise (xlsx-cells.ts), a date (read-excel-file's Date) among them, named by the
   * number it holds: a date shown is a day off below 61 (Excel's 29 February 1900). A count its format
   * shows as nothing is not counted, as it looks; an expected is read as stored.
   */
  const problemIn = (cells: readonly Cell[], index: number, column?: number) => {
    const cell = column === undefined ? undefined : cells[column];
    if (typeof cell !== 'object' || cell === null) return undefined;
    const name = column === header.petId ? 'petId' : (header.names[column as number] as string).toLowerCase();
    // read-excel-file's conversion taken back: day 25,569 is 1970-01-01; the 1904 system starts 1,462 days later.
    const serial = cell instanceof Date && cell.getTime() / 86_400_000 + 25_569 - (date1904 ? 1_462 : 0);
    const format = formatted.get(index)?.get(column as number);
    if (serial !== false || format)
      return `${name} holds ${serial === false ? (cell as NumberCell).number : Math.round(serial * 1e6) / 1e6}, ${format && serial === false ? `which its number format (${printable(format, 40)}) shows otherwise` : 'formatted as a date or time'}: format the column as a number, and check it`;
    return 'number' in cell ? spreadsheetNumberProblem(cell.number, name) : undefined;
  };
  const hiddenRead: number[] = [];
  for (let index = first + 1; index < sheet.length; index++) {
    const cells = sheet[index] as Cell[];
    const [petId, counted, expected] = [header.petId, header.counted, header.expected].map((column) =>
      problemIn(cells, index, column),
    );
    const pet = cellText(cells[header.petId] ?? null);
    const range = mergedRows.get(index);
    const problem = counted ?? expected ?? (range && mergedAcross(range));
    const texts = cells.map(cellText);
    if (formatted.get(index)?.get(header.counted) === '') texts[header.counted] = '';
    const late = lateHeader(texts, `row ${index + 1}`, header);
    const row = late ?? (petId ? { problem: petId } : problem ? { problem, pet } : fromCells(texts, header));
    if (hiddenRows.has(index) && typeof row === 'object' && !('uncounted' in row)) hiddenRead.push(index + 1);
    rows.add(index + 1, row);
  }
  if (hiddenRead.length > 0)
    rows.notices.push(
      `${plural(hiddenRead.length, 'row')} hidden in the workbook (by hand or by a filter) ${hiddenRead.length === 1 ? 'is' : 'are'} read all the same: ${hiddenRead.length === 1 ? 'row' : 'rows'} ${hiddenRead.slice(0, 10).join(', ')}${hiddenRead.length > 10 ? ', …' : ''}`,
    );
  return rows.finish('row');
}
