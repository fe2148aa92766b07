import { once } from 'node:events';
import { comparePetIds, PET_STATUSES, type PetStatus } from '../contract/rules';
import type { InventoryItem } from '../contract/schemas';
import { PetinvError, usageError } from '../errors';
import { chooseOutput, type OutputChoice } from '../output/choose';
import type { CommandContext } from '../output/context';
import type { Exporter } from '../output/exporter';
import { checkItemFields, itemExporter } from '../output/inventory';
import { plural } from '../output/plural';
import { connect } from './connect';
import type { GlobalFlags } from './flags';
import type { SORT_KEYS } from './options';

/** list's flags (declared for commander in src/program/inventory.ts). */
export interface ListFlags extends GlobalFlags {
  table?: boolean;
  ndjson?: boolean;
  csv?: boolean;
  status?: string;
  low?: number;
  sort?: SortKey;
  reverse?: boolean;
  limit?: number;
  watch?: boolean;
  interval?: number;
  initial?: boolean;
  countSheet?: boolean;
}

type SortKey = (typeof SORT_KEYS)[number];

const compareBy: Record<SortKey, (a: InventoryItem, b: InventoryItem) => number> = {
  petId: (a, b) => comparePetIds(a.petId, b.petId),
  quantity: (a, b) => a.quantity - b.quantity || compareBy.petId(a, b),
  status: (a, b) => PET_STATUSES.indexOf(a.status) - PET_STATUSES.indexOf(b.status) || compareBy.petId(a, b),
};

/** Checks every option before the request, so a typo costs nothing. */
function parseListOptions(flags: ListFlags, context: CommandContext) {
  const statuses = flags.status?.split(',').map((status) => status.trim());
  for (const status of statuses ?? [])
    if (!(PET_STATUSES as readonly string[]).includes(status))
      throw usageError(`--status ${flags.status}: "${status}" is not one of ${PET_STATUSES.join(', ')}`);
  const countSheet = flags.countSheet ? countSheetFormat(flags, context) : undefined;
  const output: OutputChoice = countSheet
    ? { format: 'csv', headers: true, color: false, pretty: false, explicit: true }
    : chooseOutput(flags, context, [
        [flags.ndjson, 'ndjson', '--ndjson'],
        [flags.csv, 'csv', '--csv'],
        [flags.table, 'table', '--table'],
      ]);
  if (!countSheet) checkItemFields(output);
  if (flags.watch && output.format === 'csv')
    throw usageError('--watch prints a table on a terminal, else JSON lines; not --csv');
  if (!flags.watch && (flags.interval !== undefined || flags.initial))
    throw usageError(`${flags.initial ? '--initial' : '--interval'} goes with --watch`);
  return {
    statuses: statuses && new Set(statuses as PetStatus[]),
    low: flags.low,
    sort: flags.sort,
    reverse: flags.reverse === true,
    limit: flags.limit,
    output,
    countSheet,
  };
}

/** --count-sheet's columns are fixed, for set --file to read back: CSV, or a workbook with -o xlsx. */
function countSheetFormat(flags: ListFlags, context: CommandContext): 'csv' | 'xlsx' {
  const format =
    flags.output ?? (flags.json ? 'json' : flags.ndjson ? 'ndjson' : flags.table ? 'table' : 'csv');
  if (format !== 'csv' && format !== 'xlsx')
    throw usageError(`--count-sheet writes CSV, or an Excel workbook with -o xlsx; not ${format}`);
  if (flags.fields || flags.headers === false || flags.watch)
    throw usageError(
      '--count-sheet has its own columns (petId,status,expected,counted): not with --fields, --no-headers or --watch',
    );
  if (format === 'xlsx' && context.stdout.isTTY)
    throw usageError(
      '-o xlsx writes a workbook, which a terminal cannot show: redirect it to a file (petinv list --count-sheet -o xlsx > count.xlsx)',
    );
  return format;
}
type ListOptions = ReturnType<typeof parseListOptions>;

const selected =
  ({ statuses, low }: ListOptions) =>
  (item: InventoryItem) =>
    (!statuses || statuses.has(item.status)) && (low === undefined || item.quantity <= low);

/** The whole list as the options choose it: filtered, sorted, limited (what --watch shows at each poll). */
function selectItems(items: InventoryItem[], options: ListOptions): InventoryItem[] {
  // `items` is this command's own copy of the answer, so sorting may work in place.
  const chosen = options.statuses || options.low !== undefined ? items.filter(selected(options)) : items;
  if (options.sort) chosen.sort(compareBy[options.sort]);
  if (options.reverse) chosen.reverse();
  return options.limit === undefined ? chosen : chosen.slice(0, options.limit);
}

/**
 * Writes the list as the answer arrives, one batch of items at a time, when nothing needs the whole list
 * first (--sort and --reverse do, and the table, for its widths). Memory then holds a batch, whatever
 * the size of the inventory. --limit without --sort stops reading once it has its pets.
 */
async function writeList(
  batches: AsyncIterable<InventoryItem[]>,
  options: ListOptions,
  exporter: Exporter<InventoryItem>,
  context: CommandContext,
  /** How many items were written so far, for the message of a failure that comes after them. */
  progress: { written: number },
): Promise<void> {
  const filter = options.statuses || options.low !== undefined;
  const keep = selected(options);
  const wholeList = options.sort !== undefined || options.reverse || options.output.format === 'table';
  let left = wholeList ? Number.POSITIVE_INFINITY : (options.limit ?? Number.POSITIVE_INFINITY);
  const kept: InventoryItem[] = [];
  if (left === 0) return;
  for await (const batch of batches) {
    let items = filter ? batch.filter(keep) : batch;
    if (wholeList) {
      for (const item of items) kept.push(item);
      continue;
    }
    if (items.length > left) items = items.slice(0, left);
    left -= items.length;
    const text = exporter.rows(items);
    if (context.outputClosed?.aborted) return;
    progress.written += items.length;
    // Until the stream can take more, or was closed (the entry then decides the status).
    if (text !== '' && !context.stdout.write(text))
      await once(context.stdout, 'drain', { signal: context.outputClosed }).catch(() => {});
    if (left === 0 || context.outputClosed?.aborted) break;
  }
  if (wholeList)
    context.stdout.write(
      exporter.rows(selectItems(kept, { ...options, statuses: undefined, low: undefined })),
    );
}

export async function runList(flags: ListFlags, context: CommandContext): Promise<void> {
  const options = parseListOptions(flags, context);
  const { client, where } = await connect(flags, context);
  if (flags.watch) {
    const { watchInventory } = await import('./watch');
    const screen = context.stdout.isTTY === true && !context.json && options.output.format !== 'ndjson';
    return watchInventory(
      {
        client,
        envName: where,
        view: (items) => selectItems(items, options),
        intervalMs: flags.interval ?? 2000,
        mode: screen ? 'screen' : 'events',
        initial: flags.initial === true,
      },
      context,
    );
  }
  if (options.countSheet === 'xlsx') {
    const { countSheetWorkbook } = await import('../output/count-sheet');
    const items: InventoryItem[] = [];
    for await (const batch of client.streamInventory()) for (const item of batch) items.push(item);
    context.stdout.write(await countSheetWorkbook(selectItems(items, options)));
    return;
  }
  const exporter = options.countSheet
    ? (await import('../output/count-sheet')).countSheetCsv()
    : itemExporter(options.output, where);
  const progress = { written: 0 };
  try {
    await writeList(client.streamInventory(), options, exporter, context, progress);
  } catch (error) {
    // Lines already written cannot be taken back: say plainly that the output is incomplete. JSON
    // output is left without its closing bracket, so no JSON reader takes it for the whole list.
    if (error instanceof PetinvError && progress.written > 0) {
      const incomplete = `; the output stops after ${plural(progress.written, 'pet')} and is incomplete`;
      throw new PetinvError(error.kind, `${error.message}${incomplete}`, {
        ...error.body,
        message: `${error.body.message}${incomplete}`,
      });
    }
    throw error;
  }
  if (!context.outputClosed?.aborted) context.stdout.write(exporter.end());
}
