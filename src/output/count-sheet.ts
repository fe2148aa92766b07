import type { InventoryItem } from '../contract/schemas';
import { type Column, createExporter, type Exporter } from './exporter';

/**
 * The count sheet staff fill in (`list --count-sheet`): `set --file` reads expected as each row's from, so
 * a pet a colleague changed since the export is a conflict, never overwritten.
 */
export const COUNT_SHEET_COLUMNS: readonly Column<InventoryItem>[] = [
  { key: 'petId', heading: 'PET ID', value: (item) => item.petId },
  { key: 'status', heading: 'STATUS', value: (item) => item.status, plain: true },
  { key: 'expected', heading: 'EXPECTED', value: (item) => item.quantity },
  { key: 'counted', heading: 'COUNTED', value: () => null },
];

/** The count sheet as CSV, written as the list arrives. */
export const countSheetCsv = (): Exporter<InventoryItem> =>
  createExporter(COUNT_SHEET_COLUMNS, { format: 'csv', headers: true, color: false, pretty: false });

/** The count sheet as a workbook (write-excel-file, loaded only here): petIds in text cells, the header kept in view. */
export async function countSheetWorkbook(items: readonly InventoryItem[]): Promise<Buffer> {
  const { default: writeXlsxFile } = await import('write-excel-file/node');
  const header = COUNT_SHEET_COLUMNS.map((column) => ({ value: column.key, fontWeight: 'bold' as const }));
  const rows = items.map((item) => [
    { type: String, value: String(item.petId), format: '@' },
    { type: String, value: item.status },
    // A spreadsheet keeps 15 digits of a number: a longer quantity goes in a text cell, as it is.
    item.quantity < 1e15
      ? { type: Number, value: item.quantity }
      : { type: String, value: String(item.quantity), format: '@' },
    { type: Number, value: undefined },
  ]);
  const columns = [{ width: 21 }, { width: 11 }, { width: 10 }, { width: 10 }];
  return writeXlsxFile([header, ...rows], { columns, stickyRowsCount: 1 }).toBuffer();
}
