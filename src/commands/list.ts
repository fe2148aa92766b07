import { comparePetIds, type InventoryItem, PET_STATUSES, type PetStatus } from '../api/schemas';
import { usageError } from '../errors';
import { type ListFormat, renderItems } from '../output/inventory';
import type { ListFlags } from '../program';
import { connect } from './connect';
import type { CommandContext } from './context';

export const SORT_KEYS = ['petId', 'quantity', 'status'] as const;
type SortKey = (typeof SORT_KEYS)[number];

const compareBy: Record<SortKey, (a: InventoryItem, b: InventoryItem) => number> = {
  petId: (a, b) => comparePetIds(a.petId, b.petId),
  quantity: (a, b) => a.quantity - b.quantity || compareBy.petId(a, b),
  status: (a, b) => PET_STATUSES.indexOf(a.status) - PET_STATUSES.indexOf(b.status) || compareBy.petId(a, b),
};

/** Checks every option before the request, so a typo costs nothing. */
function parseListOptions(flags: ListFlags) {
  const statuses = flags.status?.split(',').map((status) => status.trim());
  for (const status of statuses ?? []) {
    if (!(PET_STATUSES as readonly string[]).includes(status)) {
      throw usageError(`--status ${flags.status}: "${status}" is not one of ${PET_STATUSES.join(', ')}`);
    }
  }
  const sort = flags.sort;
  if (sort !== undefined && !(SORT_KEYS as readonly string[]).includes(sort))
    throw usageError(`--sort ${sort}: must be one of ${SORT_KEYS.join(', ')}`);
  if ([flags.ndjson, flags.csv].filter(Boolean).length > 1)
    throw usageError('choose one of --json, --ndjson and --csv');
  if (flags.watch && flags.csv)
    throw usageError('--watch prints a table on a terminal, else JSON lines; not --csv');
  if (!flags.watch && (flags.interval !== undefined || flags.initial))
    throw usageError(`${flags.initial ? '--initial' : '--interval'} goes with --watch`);
  return {
    statuses: statuses && new Set(statuses as PetStatus[]),
    low: flags.low,
    sort: sort as SortKey | undefined,
    reverse: flags.reverse === true,
    limit: flags.limit,
  };
}

function selectItems(items: InventoryItem[], options: ReturnType<typeof parseListOptions>): InventoryItem[] {
  const { statuses, low, limit } = options;
  // `items` is this command's own copy of the answer, so filtering and sorting may work in place.
  let selected = items;
  if (statuses || low !== undefined) {
    selected = items.filter(
      (item) => (!statuses || statuses.has(item.status)) && (low === undefined || item.quantity <= low),
    );
  }
  // Without --sort the service's own order stands.
  if (options.sort) selected.sort(compareBy[options.sort]);
  if (options.reverse) selected.reverse();
  return limit === undefined ? selected : selected.slice(0, limit);
}

export async function runList(flags: ListFlags, context: CommandContext): Promise<void> {
  const options = parseListOptions(flags);
  const { client, envName } = await connect(flags, context);
  if (flags.watch) {
    const { watchInventory } = await import('./watch');
    const screen = context.stdout.isTTY === true && !context.json && !flags.ndjson;
    return watchInventory(
      {
        client,
        envName,
        view: (items) => selectItems(items, options),
        intervalMs: flags.interval ?? 2000,
        mode: screen ? 'screen' : 'events',
        initial: flags.initial === true,
      },
      context,
    );
  }
  const items = selectItems(await client.listInventory(), options);
  const format: ListFormat = context.json
    ? 'json'
    : flags.ndjson
      ? 'ndjson'
      : flags.csv
        ? 'csv'
        : flags.table || context.stdout.isTTY
          ? 'table'
          : 'tsv';
  context.stdout.write(renderItems(items, format, { color: context.color, envName }));
}
