import { PET_STATUSES, type PetStatus } from '../contract/rules';
import type { InventoryItem } from '../contract/schemas';
import type { Column } from './exporter';
import { itemValue, paint, statusPainter } from './inventory';
import { plural } from './plural';

export interface InventorySummary {
  pets: number;
  units: bigint;
  statuses: Record<PetStatus, { pets: number; units: bigint }>;
  /** Pets at or below `atMost`: how many, and the first LOW_PETS_SHOWN, lowest first (ties by petId). */
  low: { atMost: number; pets: number; items: InventoryItem[] };
  /** The largest stocks, largest first (ties by petId). */
  largest: InventoryItem[];
}

/** How many of the low pets the summary names; `petinv list --low N` lists them all. */
export const LOW_PETS_SHOWN = 10;

const ranksAbove = (a: InventoryItem, b: InventoryItem) =>
  a.quantity > b.quantity || (a.quantity === b.quantity && a.petId < b.petId);

const ranksBelow = (a: InventoryItem, b: InventoryItem) =>
  a.quantity < b.quantity || (a.quantity === b.quantity && a.petId < b.petId);

/** Puts `item` into `kept`, ordered by `before`, keeping at most `size`: one pass, bounded memory. */
function keepRanked(
  kept: InventoryItem[],
  item: InventoryItem,
  size: number,
  before: (a: InventoryItem, b: InventoryItem) => boolean,
) {
  if (size === 0 || (kept.length >= size && !before(item, kept[kept.length - 1] as InventoryItem))) return;
  let at = kept.length;
  while (at > 0 && before(item, kept[at - 1] as InventoryItem)) at--;
  kept.splice(at, 0, item);
  if (kept.length > size) kept.pop();
}

/**
 * Every figure of `petinv summary` in one pass over the list, memory bounded by `top` and LOW_PETS_SHOWN;
 * units summed in doubles while they are exact and in bigints past that, so each addition is cheap.
 */
export function summarizeInventory(items: Iterable<InventoryItem>, atMost: number, top: number) {
  const pets: Record<PetStatus, number> = { available: 0, pending: 0, sold: 0 };
  const exact: Record<PetStatus, number> = { available: 0, pending: 0, sold: 0 };
  const carried: Record<PetStatus, bigint> = { available: 0n, pending: 0n, sold: 0n };
  let low = 0;
  const lowest: InventoryItem[] = [];
  const largest: InventoryItem[] = [];
  for (const item of items) {
    const { status, quantity } = item;
    pets[status]++;
    // Quantities are safe integers; their sum stays exact only below 2^53.
    if (exact[status] > Number.MAX_SAFE_INTEGER - Math.abs(quantity)) {
      carried[status] += BigInt(exact[status]);
      exact[status] = 0;
    }
    exact[status] += quantity;
    if (quantity <= atMost) {
      low++;
      keepRanked(lowest, item, LOW_PETS_SHOWN, ranksBelow);
    }
    keepRanked(largest, item, top, ranksAbove);
  }
  const statuses = {} as InventorySummary['statuses'];
  let units = 0n;
  for (const status of PET_STATUSES) {
    statuses[status] = { pets: pets[status], units: carried[status] + BigInt(exact[status]) };
    units += statuses[status].units;
  }
  return {
    pets: pets.available + pets.pending + pets.sold,
    units,
    statuses,
    low: { atMost, pets: low, items: lowest },
    largest,
  };
}

/** One JSON object; units and petIds written as exact integers, as everywhere in petinv's JSON. */
export function summaryValue(summary: InventorySummary, envName: string) {
  const { pets, units, statuses, low, largest } = summary;
  return {
    env: envName,
    pets,
    units,
    statuses,
    low: { ...low, items: low.items.map(itemValue) },
    largest: largest.map(itemValue),
  };
}

/** The summary as rows, one per status, for -o table|tsv|csv|ndjson and --fields. */
type StatusSummaryRow = InventorySummary['statuses'][PetStatus] & { status: PetStatus };

export const SUMMARY_COLUMNS: readonly Column<StatusSummaryRow>[] = [
  {
    key: 'status',
    heading: 'STATUS',
    value: (row) => row.status,
    minWidth: 'available'.length,
    paint: (_text, row, color) => statusPainter(color)(row.status),
  },
  { key: 'pets', heading: 'PETS', value: (row) => row.pets, align: 'right' },
  { key: 'units', heading: 'UNITS', value: (row) => row.units, align: 'right' },
];

/** The table's last line, as the chart's first: `12 pets · 186 units · local`. */
export const summaryFooter =
  (envName: string) =>
  (rows: readonly StatusSummaryRow[]): string => {
    let units = 0n;
    for (const row of rows) units += row.units;
    const pets = rows.reduce((total, row) => total + row.pets, 0);
    return `${plural(pets, 'pet')} · ${plural(units, 'unit')} · ${envName}`;
  };

export const summaryRows = (summary: InventorySummary): StatusSummaryRow[] =>
  PET_STATUSES.map((status) => ({ status, ...summary.statuses[status] }));

const EIGHTHS = ['', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];

/** A bar of `fraction` of `width` cells, to the eighth of a cell. */
export function bar(fraction: number, width: number): string {
  const eighths = Math.round(Math.max(0, Math.min(1, fraction)) * width * 8);
  return '█'.repeat(Math.floor(eighths / 8)) + EIGHTHS[eighths % 8];
}

/** The fewest cells a bar chart is worth drawing in; a narrower terminal gets the figures alone. */
const MIN_BAR_WIDTH = 8;

/** The summary as text: figures per status, with a bar of units when `columns` is given, fitting it. */
export function renderSummary(
  summary: InventorySummary,
  options: {
    color: boolean;
    envName: string;
    columns?: number;
    /** The options that reach this service (`--env staging`), for the command it suggests: safe to paste. */
    target?: string;
  },
): string {
  const chalk = paint(options.color);
  const paintStatus = statusPainter(options.color);
  const paintBar = { available: chalk.green, pending: chalk.yellow, sold: chalk.gray };
  const petTexts = PET_STATUSES.map((status) => plural(summary.statuses[status].pets, 'pet'));
  const unitTexts = PET_STATUSES.map((status) => plural(summary.statuses[status].units, 'unit'));
  const petWidth = Math.max(...petTexts.map((text) => text.length));
  const unitWidth = Math.max(...unitTexts.map((text) => text.length));
  const statusWidth = 'available'.length;
  const prefixWidth = statusWidth + 2 + petWidth + 2 + unitWidth + 2;
  const barWidth = options.columns === undefined ? 0 : options.columns - prefixWidth - 1;
  const most = Math.max(...PET_STATUSES.map((status) => Number(summary.statuses[status].units)));
  const lines = [
    chalk.bold(`${plural(summary.pets, 'pet')} · ${plural(summary.units, 'unit')} · ${options.envName}`),
    '',
  ];
  PET_STATUSES.forEach((status, index) => {
    const figures = `${paintStatus(status)}${' '.repeat(statusWidth - status.length)}  ${String(petTexts[index]).padStart(petWidth)}  ${String(unitTexts[index]).padStart(unitWidth)}`;
    const units = Number(summary.statuses[status].units);
    const drawn =
      barWidth >= MIN_BAR_WIDTH && most > 0 ? `  ${paintBar[status](bar(units / most, barWidth))}` : '';
    lines.push(`${figures}${drawn}`.trimEnd());
  });
  const idWidth = Math.max(
    0,
    ...[...summary.low.items, ...summary.largest].map((item) => String(item.petId).length),
  );
  const itemLine = (item: InventoryItem) =>
    `  ${String(item.petId).padStart(idWidth)}  ${paintStatus(item.status)}${' '.repeat(statusWidth - item.status.length)}  ${item.quantity}`;
  const { low } = summary;
  lines.push('', `At or below ${low.atMost}: ${plural(low.pets, 'pet')}`, ...low.items.map(itemLine));
  if (low.pets > low.items.length)
    lines.push(
      `  … and ${low.pets - low.items.length} more: petinv list ${options.target ? `${options.target} ` : ''}--low ${low.atMost} --sort quantity`,
    );
  if (summary.largest.length > 0) lines.push('Largest stocks:', ...summary.largest.map(itemLine));
  return `${lines.join('\n')}\n`;
}
