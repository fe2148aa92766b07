import { Chalk } from 'chalk';
import { serializeItem } from '../api/json';
import type { InventoryItem, PetStatus } from '../api/schemas';
import { plural } from './plural';

export type ListFormat = 'table' | 'tsv' | 'json' | 'ndjson' | 'csv';

export interface RenderOptions {
  color: boolean;
  /** Named in the table's footer line. */
  envName: string;
}

/** chalk is always built from the edge's decision, because chalk alone ignores NO_COLOR. */
export const paint = (color: boolean) => new Chalk({ level: color ? 1 : 0 });

export function statusPainter(color: boolean): (status: PetStatus) => string {
  const chalk = paint(color);
  const painters: Record<PetStatus, (text: string) => string> = {
    available: chalk.green,
    pending: chalk.yellow,
    sold: chalk.dim,
  };
  return (status) => painters[status](status);
}

const HEADER = ['PET ID', 'STATUS', 'QUANTITY'] as const;

/**
 * The terminal table. cli-table3 lays out a table in time quadratic in its rows (a 100,000-pet store
 * would take minutes), and these three columns need no wrapping, so rows are padded here in one pass.
 */
function renderTable(items: readonly InventoryItem[], options: RenderOptions): string {
  const chalk = paint(options.color);
  const paintStatus = statusPainter(options.color);
  let idWidth = HEADER[0].length;
  let quantityWidth = HEADER[2].length;
  let units = 0n;
  for (const item of items) {
    idWidth = Math.max(idWidth, String(item.petId).length);
    quantityWidth = Math.max(quantityWidth, String(item.quantity).length);
    units += BigInt(item.quantity);
  }
  const statusWidth = 'available'.length;
  const lines = new Array<string>(items.length + 2);
  lines[0] = chalk.bold(
    `${HEADER[0].padStart(idWidth)}  ${HEADER[1].padEnd(statusWidth)}  ${HEADER[2].padStart(quantityWidth)}`,
  );
  let line = 1;
  for (const item of items) {
    const gap = ' '.repeat(statusWidth - item.status.length);
    lines[line++] =
      `${String(item.petId).padStart(idWidth)}  ${paintStatus(item.status)}${gap}  ${String(item.quantity).padStart(quantityWidth)}`;
  }
  const pets = plural(items.length, 'pet');
  lines[line] = chalk.dim(`${pets} · ${plural(units, 'unit')} · ${options.envName}`);
  return `${lines.join('\n')}\n`;
}

export function renderItems(
  items: readonly InventoryItem[],
  format: ListFormat,
  options: RenderOptions,
): string {
  if (items.length === 0 && format !== 'table' && format !== 'json' && format !== 'csv') return '';
  switch (format) {
    case 'table':
      return renderTable(items, options);
    case 'json':
      return `[${items.map(serializeItem).join(',')}]\n`;
    case 'ndjson':
      return `${items.map(serializeItem).join('\n')}\n`;
    case 'csv':
      return `petId,status,quantity\n${items.map((item) => `${item.petId},${item.status},${item.quantity}\n`).join('')}`;
    case 'tsv':
      return items.map((item) => `${item.petId}\t${item.status}\t${item.quantity}\n`).join('');
  }
}
