import type { InventoryItem, PetStatus } from '../contract/schemas';
import type { OutputChoice } from './choose';
import { type Column, chooseColumns, createExporter } from './exporter';
import { plural } from './plural';
import { needsTsvHeading } from './read-back';
import { paint } from './terminal';

export { paint };

const STATUS_COLOURS = { available: 'green', pending: 'yellow', sold: 'dim' } as const;
// Made when first needed, not as the module loads: output without colour then never loads chalk.
let chalk: ReturnType<typeof paint> | undefined;
function inColourOf(status: PetStatus, text: string): string {
  chalk ??= paint(true);
  return chalk[STATUS_COLOURS[status]](text);
}

export const statusPainter =
  (color: boolean) =>
  (status: PetStatus): string =>
    color ? inColourOf(status, status) : status;

/** An inventory item's columns, in every format: `--fields petId,quantity` picks among them by key. */
export const ITEM_COLUMNS: readonly Column<InventoryItem>[] = [
  { key: 'petId', heading: 'PET ID', value: (item) => item.petId, align: 'right' },
  {
    key: 'status',
    heading: 'STATUS',
    value: (item) => item.status,
    plain: true,
    minWidth: 'available'.length,
    paint: (text, item, color) => (color ? inColourOf(item.status, text) : text),
  },
  { key: 'quantity', heading: 'QUANTITY', value: (item) => item.quantity, align: 'right' },
];

/** The order of an item's fields in JSON: the service's own (petId, quantity, status). */
const ITEM_JSON_FIELDS = ['petId', 'quantity', 'status'] as const;
/** An item as JSON values in that order, whatever order its object has. */
export const itemValue = ({ petId, quantity, status }: InventoryItem) => ({ petId, quantity, status });

/** The table's last line: `12 pets · 186 units · local`. */
export const inventoryFooter =
  (envName: string) =>
  (items: readonly InventoryItem[]): string => {
    let units = 0n;
    for (const item of items) units += BigInt(item.quantity);
    return `${plural(items.length, 'pet')} · ${plural(units, 'unit')} · ${envName}`;
  };

/** JSON keeps the service's field order (petId, quantity, status) unless --fields gives one. */
function itemFields(output: OutputChoice): readonly string[] | undefined {
  const json = output.format === 'json' || output.format === 'ndjson';
  return output.fields ?? (json ? ITEM_JSON_FIELDS : undefined);
}

/** Refuses a --fields name that is not an item's, before anything is sent. */
export function checkItemFields(output: OutputChoice): void {
  chooseColumns(ITEM_COLUMNS, itemFields(output));
}

/** Items in the chosen format: a list, or with `shape: 'one'` one item (an object in JSON). */
export function itemExporter(output: OutputChoice, envName: string, shape: 'list' | 'one' = 'list') {
  return createExporter(ITEM_COLUMNS, {
    ...output,
    fields: itemFields(output),
    shape,
    footer: inventoryFooter(envName),
    tsvHeading: needsTsvHeading(output.fields),
  });
}
