import { quantityLeftBy } from '../client/write-outcome';
import type { InventoryItem } from '../contract/schemas';
import { usageError } from '../errors';
import { chooseOutput, refuseFieldsInJson } from '../output/choose';
import type { CommandContext } from '../output/context';
import { type Column, chooseColumns, exportRows } from '../output/exporter';
import { PLAN_COLUMNS, writePlan } from '../output/plan';
import { confirmChange, parseIntegerArgument, parsePetIdArgument } from './arguments';
import { connect } from './connect';
import { readCurrent } from './current';
import type { GlobalFlags } from './flags';
import { historyFor } from './record';

/** adjust's flags (declared for commander in src/program/inventory.ts). */
export interface AdjustFlags extends GlobalFlags {
  dryRun?: boolean;
  yes?: boolean;
}

interface Adjusted {
  petId: bigint;
  from: number;
  item: InventoryItem;
}

/**
 * What adjust did: `petId<TAB>before<TAB>after` in a pipe (as `list` prints its rows), and with --json
 * `{"petId","from","to","item"}`, the item only in JSON.
 */
const ADJUSTED_COLUMNS: readonly Column<Adjusted>[] = [
  { key: 'petId', heading: 'PET ID', value: (row) => row.petId, align: 'right' },
  { key: 'from', heading: 'BEFORE', value: (row) => row.from, align: 'right' },
  { key: 'to', heading: 'AFTER', value: (row) => row.item.quantity, align: 'right' },
  {
    key: 'item',
    heading: 'ITEM',
    // The service's field order, whatever order the answer's object has.
    value: ({ item }) => ({ petId: item.petId, quantity: item.quantity, status: item.status }),
    jsonOnly: true,
  },
];

/**
 * Reads the current quantity, then sets the sum. The service has no atomic increment, so a change
 * made by someone else between the read and the write is overwritten; docs/guide.md says so.
 */
export async function runAdjust(
  petIdText: string,
  deltaText: string,
  flags: AdjustFlags,
  context: CommandContext,
) {
  const petId = parsePetIdArgument(petIdText);
  const delta = parseIntegerArgument(deltaText, 'delta');
  const output = chooseOutput(flags, context, context.stdout.isTTY ? 'table' : 'tsv');
  if (flags.dryRun) refuseFieldsInJson(output, 'a dry run', ['json', 'ndjson']);
  if (flags.dryRun) chooseColumns(PLAN_COLUMNS, output.fields, output.format);
  else chooseColumns(ADJUSTED_COLUMNS, output.fields, output.format);
  // Messages name the environment, or the URL when --base-url or PETINV_BASE_URL chose it (connect.ts).
  const { client, envName, baseUrl, where } = await connect(flags, context);
  const current = await readCurrent(client, petId, where);
  const target = current.quantity + delta;
  if (!Number.isSafeInteger(target))
    throw usageError(`pet ${petId}: ${current.quantity} ${deltaText} is out of range`);
  if (flags.dryRun) {
    writePlan([{ petId, to: target, before: current }], 'single', output, context, where);
    return;
  }
  await confirmChange(
    envName,
    where,
    `Change pet ${petId} from ${current.quantity} to ${target}`,
    flags.yes,
    context,
  );
  const command = `adjust ${petId} ${deltaText}`;
  const record = (after: number) =>
    historyFor(baseUrl, context, client.storeId ?? null).record({
      env: where,
      command,
      changes: [{ petId, before: current.quantity, after }],
    });
  let item: InventoryItem;
  try {
    item = await client.updateInventory(petId, target);
  } catch (error) {
    // Maybe applied, or answered with another quantity: recorded with what it may have left, for undo.
    const left = quantityLeftBy(error, target);
    if (left !== undefined && left !== current.quantity) await record(left);
    throw error;
  }
  if (item.quantity !== current.quantity) await record(item.quantity);
  if (context.stdout.isTTY && !output.explicit) {
    context.stdout.write(`${petId}: ${current.quantity} → ${item.quantity}\n`);
    return;
  }
  context.stdout.write(
    exportRows(ADJUSTED_COLUMNS, { ...output, shape: 'one' }, [{ petId, from: current.quantity, item }]),
  );
}
