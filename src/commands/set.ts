import { applyBulk } from '../bulk/apply';
import type { BulkOptions } from '../bulk/options';
import { planBulk, rehearseBulk } from '../bulk/plan';
import { reportBulk, resultExporter } from '../bulk/report';
import type { InventoryItem } from '../contract/schemas';
import { usageError } from '../errors';
import { chooseOutput, type OutputChoice, refuseFieldsInJson } from '../output/choose';
import type { CommandContext } from '../output/context';
import { chooseColumns } from '../output/exporter';
import { checkItemFields, itemExporter } from '../output/inventory';
import { PLAN_COLUMNS, writePlan } from '../output/plan';
import { confirmChange, parsePetIdArgument, parseQuantityArgument } from './arguments';
import { connect } from './connect';
import { readCurrent } from './current';
import type { GlobalFlags } from './flags';
import { DEFAULT_CONCURRENCY } from './options';

/** set's flags (declared for commander in src/program/inventory.ts). */
export interface SetFlags extends GlobalFlags {
  file?: string;
  strict?: boolean;
  concurrency?: number;
  dryRun?: boolean;
  ndjson?: boolean;
  yes?: boolean;
}

/** One updated item: a row on a terminal, a TSV line in a pipe, the item itself with --json; or as -o says. */
function writeItem(item: InventoryItem, output: OutputChoice, context: CommandContext, envName: string) {
  const exporter = itemExporter(output, envName, 'one');
  context.stdout.write(exporter.rows([item]) + exporter.end());
}

export async function runSet(
  petIdText: string | undefined,
  quantityText: string | undefined,
  flags: SetFlags,
  context: CommandContext,
) {
  const bulk = flags.file !== undefined || petIdText === '-';
  if (!bulk) {
    if (petIdText === undefined || quantityText === undefined) {
      throw usageError('give a petId and a quantity (petinv set 42 7), or bulk updates with --file F or -');
    }
    const petId = parsePetIdArgument(petIdText);
    const quantity = parseQuantityArgument(quantityText);
    refuseBulkOnlyOptions(flags);
    const output = chooseOutput(flags, context, context.stdout.isTTY ? 'table' : 'tsv');
    if (flags.dryRun) {
      refuseFieldsInJson(output, 'a dry run', ['json', 'ndjson']);
      chooseColumns(PLAN_COLUMNS, output.fields, output.format);
    } else checkItemFields(output);
    const { client, envName, where } = await connect(flags, context);
    if (flags.dryRun) {
      const before = await readCurrent(client, petId, where);
      writePlan([{ petId, to: quantity, before }], 'single', output, context, where);
      return;
    }
    await confirmChange(envName, `Set pet ${petId} to ${quantity}`, flags.yes, context);
    writeItem(await client.updateInventory(petId, quantity), output, context, where);
    return;
  }
  if (quantityText !== undefined || (flags.file !== undefined && petIdText !== undefined)) {
    throw usageError(
      'bulk updates take no petId or quantity arguments: petinv set --file F, or petinv set -',
    );
  }
  await runBulkSet(flags, context);
}

/** Options that only mean something for bulk input are refused for one pet rather than silently ignored. */
function refuseBulkOnlyOptions(flags: SetFlags) {
  const given = [
    flags.strict && '--strict',
    flags.concurrency !== undefined && '--concurrency',
    flags.ndjson && '--ndjson',
  ].filter(Boolean);
  if (given.length > 0) {
    throw usageError(
      `${given.join(', ')} ${given.length === 1 ? 'applies' : 'apply'} only to bulk updates (petinv set --file F, or petinv set -)`,
    );
  }
}

/** A bulk run in three steps: plan (read and check the input), apply (send it), report (results, summary, exit). */
async function runBulkSet(flags: SetFlags, context: CommandContext) {
  const output = chooseOutput(flags, context, context.stdout.isTTY ? 'table' : 'tsv', [
    [flags.ndjson, 'ndjson', '--ndjson'],
  ]);
  // Their JSON and NDJSON shapes are documented (results, skipped lines, entries never sent): no --fields.
  refuseFieldsInJson(output, flags.dryRun ? 'a dry run' : 'bulk results', ['json', 'ndjson']);
  if (flags.dryRun) chooseColumns(PLAN_COLUMNS, output.fields, output.format);
  // The flags end here: bulk/ is told its own options. -o ndjson is --ndjson there.
  const options: BulkOptions = { file: flags.file, strict: flags.strict, ndjson: output.format === 'ndjson' };
  // Without -o, --fields or --no-headers a run prints its summary only; with them, a row per result.
  const rows =
    output.explicit && !options.ndjson && !context.json && !flags.dryRun ? resultExporter(output) : undefined;
  const input = await planBulk(options, context);
  // Messages name the environment, or the URL when --base-url or PETINV_BASE_URL chose it (connect.ts).
  const { client, envName, where } = await connect(flags, context);
  if (flags.dryRun) return rehearseBulk(input, client, output, context, where);
  await confirmChange(envName, `Apply ${input.entries.length} updates`, flags.yes, context);
  const concurrency = flags.concurrency ?? DEFAULT_CONCURRENCY;
  const { outcome, seconds } = await applyBulk(input, client, options, concurrency, context, rows);
  reportBulk(outcome, input, options, context, where, seconds, rows);
}
