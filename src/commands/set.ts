import type { InventoryItem } from '../api/schemas';
import { applyBulk } from '../bulk/apply';
import { planBulk, rehearseBulk } from '../bulk/plan';
import { reportBulk, resultExporter } from '../bulk/report';
import { usageError } from '../errors';
import { chooseOutput, type OutputChoice, refuseFieldsInJson } from '../output/choose';
import { chooseColumns } from '../output/exporter';
import { checkItemFields, itemExporter } from '../output/inventory';
import type { SetFlags } from '../program';
import { confirmChange, parsePetIdArgument, parseQuantityArgument } from './arguments';
import { connect } from './connect';
import type { CommandContext } from './context';
import { DEFAULT_CONCURRENCY } from './options';
import { PLAN_COLUMNS, readCurrent, writePlan } from './plan';

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
async function runBulkSet(given: SetFlags, context: CommandContext) {
  const output = chooseOutput(given, context, context.stdout.isTTY ? 'table' : 'tsv', [
    [given.ndjson, 'ndjson', '--ndjson'],
  ]);
  // Their JSON and NDJSON shapes are documented (results, skipped lines, entries never sent): no --fields.
  refuseFieldsInJson(output, given.dryRun ? 'a dry run' : 'bulk results', ['json', 'ndjson']);
  if (given.dryRun) chooseColumns(PLAN_COLUMNS, output.fields, output.format);
  // -o ndjson is --ndjson, which bulk input reads everywhere below.
  const flags = { ...given, ndjson: output.format === 'ndjson' || undefined };
  // Without -o, --fields or --no-headers a run prints its summary only; with them, a row per result.
  const rows =
    output.explicit && !flags.ndjson && !context.json && !flags.dryRun ? resultExporter(output) : undefined;
  const input = await planBulk(flags, context);
  // Messages name the environment, or the URL when --base-url or PETINV_BASE_URL chose it (connect.ts).
  const { client, envName, where } = await connect(flags, context);
  if (flags.dryRun) return rehearseBulk(input, client, output, context, where);
  await confirmChange(envName, `Apply ${input.entries.length} updates`, flags.yes, context);
  const concurrency = flags.concurrency ?? DEFAULT_CONCURRENCY;
  const { outcome, seconds } = await applyBulk(input, client, flags, concurrency, context, rows);
  reportBulk(outcome, input, flags, context, where, seconds, rows);
}
