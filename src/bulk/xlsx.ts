import { readSheet } from 'read-excel-file/universal';
import { usageError } from '../errors';
import { printable } from '../printable';
import type { BulkInput } from './entries';
import { quoted, spreadsheetNumberProblem } from './numbers';
import { fromCells, InputCollector } from './rows';
import { readHeader } from './sheet';
import { inspectWorkbook } from './xlsx-cells';

/**
 * An Excel workbook's first sheet, read by its header as a CSV sheet is. Numbers come as the text the
 * workbook stores: a petId stored as a number of over 15 digits may be rounded; its row is refused (numbers.ts).
 */

/** A number cell: the text the workbook stores for it (`5`, `9.2233720368547758E+18`). */
interface NumberCell {
  number: string;
}
type Cell = string | NumberCell | boolean | Date | null;

const cellText = (cell: Cell): string =>
  cell === null
    ? ''
    : cell instanceof Date
      ? cell.toISOString().slice(0, 10)
      : typeof cell === 'object'
        ? cell.number
        : String(cell);

export async function readWorkbook(bytes: Buffer): Promise<BulkInput> {
  let sheet: Cell[][];
  let workbook: ReturnType<typeof inspectWorkbook>;
  try {
    const data = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer;
    workbook = inspectWorkbook(bytes);
    sheet = (await readSheet(data, { parseNumber: (text) => ({ number: text }), trim: false })) as Cell[][];
  } catch (error) {
    throw usageError(
      `bulk input: the workbook cannot be read (${printable((error as Error).message, 120)}); save it again as .xlsx, or as CSV. Nothing was sent`,
    );
  }
  // The cells read as empty that hold a formula's text or an error (xlsx-cells.ts), in rows that may hold nothing else.
  const { unread, sheets } = workbook;
  const rowCount = Math.max(sheet.length, ...[...unread.keys()].map((row) => row + 1));
  sheet = Array.from({ length: rowCount }, (_, row) => {
    const cells = sheet[row] ?? [];
    const found = unread.get(row) ?? new Map<number, string>();
    const width = Math.max(cells.length, ...[...found.keys()].map((column) => column + 1));
    return Array.from({ length: width }, (_, column) => cells[column] ?? found.get(column) ?? null);
  });
  const rows = new InputCollector();
  const first = sheet.findIndex((row) => row.some((cell) => cellText(cell).trim() !== ''));
  if (first === -1) return rows.finish('row');
  const header = readHeader((sheet[first] as Cell[]).map(cellText), ',');
  rows.useHeader(header);
  if (sheets.length > 1)
    rows.notices.push(
      `the workbook has ${sheets.length} sheets: only the first, ${quoted(sheets[0] as string)}, is read (not ${sheets.slice(1, 4).map(quoted).join(', ')}${sheets.length > 4 ? ', …' : ''})`,
    );
  for (let index = first + 1; index < sheet.length; index++) {
    const cells = sheet[index] as Cell[];
    const petId = cells[header.petId];
    const untrusted =
      typeof petId === 'object' && petId !== null && 'number' in petId
        ? spreadsheetNumberProblem(petId.number)
        : undefined;
    rows.add(index + 1, untrusted ? { problem: untrusted } : fromCells(cells.map(cellText), header));
  }
  return rows.finish('row');
}
