import type { InventoryItem } from '../contract/schemas';
import { usageError } from '../errors';
import { chooseOutput, refuseFieldsInJson } from '../output/choose';
import type { CommandContext } from '../output/context';
import { type Column, chooseColumns, exportRows } from '../output/exporter';
import { itemValue } from '../output/inventory';
import { PLAN_COLUMNS, writePlan } from '../output/plan';
import { confirmChange, parseIntegerArgument, parsePetIdArgument } from './arguments';
import { connect, writeWarning } from './connect';
import { readCurrent, rehearseServeRules } from './current';
import type { GlobalFlags } from './flags';
import { writeRecorded } from './record';

/** adjust's flags (declared for commander in src/program/inventory.ts). */
export type AdjustFlags = GlobalFlags & { dryRun?: boolean; yes?: boolean };

/** What adjust did: `petId<TAB>before<TAB>after` in a pipe, `{"petId","from","to","item"}` with --json. */
const ADJUSTED_COLUMNS: readonly Column<{ petId: bigint; from: number; item: InventoryItem }>[] = [
  { key: 'petId', heading: 'PET ID', value: (row) => row.petId, align: 'right' },
  { key: 'from', heading: 'BEFORE', value: (row) => row.from, align: 'right' },
  { key: 'to', heading: 'AFTER', value: (row) => row.item.quantity, align: 'right' },
  { key: 'item', heading: 'ITEM', value: ({ item }) => itemValue(item), jsonOnly: true },
];

/**
 * Reads the current quantity, then sets the sum. The service has no atomic increment: a change made by
 * someone else between the read and the write is overwritten, except by a petinv serve, which refuses the
 * write then (Petinv-If-Quantity), and the delta is added to what the pet holds now; docs/guide.md says so.
 */
export async function runAdjust(
  petIdText: string,
  deltaText: string,
  flags: AdjustFlags,
  context: CommandContext,
) {
  const petId = parsePetIdArgument(petIdText);
  const delta = parseIntegerArgument(deltaText, 'delta');
  const output = chooseOutput(flags, context);
  if (flags.dryRun) refuseFieldsInJson(output, 'a dry run', ['json', 'ndjson']);
  if (flags.dryRun) chooseColumns(PLAN_COLUMNS, output.fields, output.format);
  else chooseColumns(ADJUSTED_COLUMNS, output.fields, output.format);
  const connection = await connect(flags, context);
  const { client, where } = connection;
  const current = await readCurrent(client, petId, where);
  const target = current.quantity + delta;
  if (!Number.isSafeInteger(target))
    throw usageError(`pet ${petId}: ${current.quantity} ${deltaText} is out of range`);
  if (flags.dryRun) {
    rehearseServeRules(client, petId, target, where);
    writePlan([{ petId, to: target, before: current }], 'single', output, context, where);
    return;
  }
  const question = `Change pet ${petId} from ${current.quantity} to ${target}`;
  await confirmChange(connection, question, flags.yes, context);
  const onChanged = (now: number) => {
    writeWarning(context, `pet ${petId} changed to ${now} since it was read; applying ${deltaText} to that`);
    return now + delta;
  };
  const change = { petId, before: current.quantity, to: target };
  const command = `adjust ${petId} ${deltaText}`;
  const { item, before } = await writeRecorded(connection, context, command, change, onChanged);
  const from = before as number;
  if (context.stdout.isTTY && !output.explicit) {
    context.stdout.write(`${petId}: ${from} → ${item.quantity}\n`);
    return;
  }
  context.stdout.write(exportRows(ADJUSTED_COLUMNS, { ...output, shape: 'one' }, [{ petId, from, item }]));
}
