import { runSheet } from '../bulk/pipeline';
import { resultExporter } from '../bulk/results';
import type { InventoryClient } from '../client/client';
import { TransportError } from '../client/transport';
import { PetinvError, usageError } from '../errors';
import { chooseOutput, refuseFieldsInJson } from '../output/choose';
import type { CommandContext } from '../output/context';
import { chooseColumns } from '../output/exporter';
import { checkItemFields, itemExporter } from '../output/inventory';
import { PLAN_COLUMNS, writePlan } from '../output/plan';
import { plural } from '../output/plural';
import { confirmChange, parsePetIdArgument, parseQuantityArgument } from './arguments';
import { connect, writeWarning } from './connect';
import { readCurrent, rehearseServeRules } from './current';
import type { GlobalFlags } from './flags';
import { bulkShape } from './options';
import { historyFor, writeRecorded } from './record';

/** set's flags (declared for commander in src/program/inventory.ts). */
export interface SetFlags extends GlobalFlags {
  file?: string;
  strict?: boolean;
  all?: boolean;
  force?: boolean;
  concurrency?: number;
  pipelining?: number;
  dryRun?: boolean;
  ndjson?: boolean;
  yes?: boolean;
}

export async function runSet(
  petIdText: string | undefined,
  quantityText: string | undefined,
  flags: SetFlags,
  context: CommandContext,
) {
  if (flags.file !== undefined || petIdText === '-') {
    if (quantityText !== undefined || (flags.file !== undefined && petIdText !== undefined))
      throw usageError(
        'bulk updates take no petId or quantity arguments: petinv set --file F, or petinv set -',
      );
    return runBulkSet(flags, context);
  }
  if (petIdText === undefined || quantityText === undefined)
    throw usageError('give a petId and a quantity (petinv set 42 7), or bulk updates with --file F or -');
  const petId = parsePetIdArgument(petIdText);
  const quantity = parseQuantityArgument(quantityText);
  refuseBulkOnlyOptions(flags);
  const output = chooseOutput(flags, context);
  if (flags.dryRun) {
    refuseFieldsInJson(output, 'a dry run', ['json', 'ndjson']);
    chooseColumns(PLAN_COLUMNS, output.fields, output.format);
  } else checkItemFields(output);
  const connection = await connect(flags, context);
  const { client, where } = connection;
  if (flags.dryRun) {
    const before = await readCurrent(client, petId, where);
    rehearseServeRules(client, petId, quantity, where);
    writePlan([{ petId, to: quantity, before }], 'single', output, context, where);
    return;
  }
  await confirmChange(connection, `Set pet ${petId} to ${quantity}`, flags.yes, context);
  // The quantity before, for the history (and undo): one read of the list, a 304 where the cache allows.
  const before = await readBefore(client, petId, where);
  const change = { petId, before: before instanceof PetinvError ? undefined : before, to: quantity };
  const { item } = await writeRecorded(connection, context, `set ${petId} ${quantity}`, change);
  if (before instanceof PetinvError)
    writeWarning(
      context,
      `pet ${petId}'s quantity before this write could not be read (${before.body.code}); this run is not recorded, so petinv undo will not know it`,
    );
  // As get prints it: a row on a terminal, a TSV line in a pipe, the item itself with --json.
  const exporter = itemExporter(output, where, 'one');
  context.stdout.write(exporter.rows([item]) + exporter.end());
}

/**
 * The pet's quantity before a write (null: not in the inventory), for the history and undo. A read that
 * fails where the write may not (a 5xx, a list cut off) is returned, and the write made all the same.
 */
async function readBefore(client: InventoryClient, petId: bigint, envName: string) {
  try {
    return (await readCurrent(client, petId, envName)).quantity;
  } catch (error) {
    if (error instanceof PetinvError && error.kind === 'notFound') return null;
    // A list that breaks the contract (a pet listed twice) is refused, as before any write; so is a read
    // that never reached the service (refused, no such host), which the write would not reach either.
    const { cause } = error as { cause?: unknown };
    const neverReached = cause instanceof TransportError && !cause.sent && !cause.brokeOff;
    const readFailed =
      error instanceof PetinvError &&
      ['network', 'server', 'rejected'].includes(error.kind) &&
      error.body.code !== 'invalid_response' &&
      !(error.kind === 'network' && neverReached);
    // Else the error, for the warning that this write is not recorded.
    if (readFailed) return error;
    throw error;
  }
}

/** Options that only mean something for bulk input are refused for one pet rather than silently ignored. */
function refuseBulkOnlyOptions(flags: SetFlags) {
  const given = [
    flags.strict && '--strict',
    flags.concurrency !== undefined && '--concurrency',
    flags.pipelining !== undefined && '--pipelining',
    flags.ndjson && '--ndjson',
    flags.all && '--all',
    flags.force && '--force',
  ].filter(Boolean);
  if (given.length > 0)
    throw usageError(
      `${given.join(', ')} ${given.length === 1 ? 'applies' : 'apply'} only to bulk updates (petinv set --file F, or petinv set -)`,
    );
}

/** A bulk run: the flags become the options of the pipeline (src/bulk/pipeline.ts), which does the rest. */
async function runBulkSet(given: SetFlags, context: CommandContext) {
  const output = chooseOutput(given, context, [[given.ndjson, 'ndjson', '--ndjson']]);
  // Their JSON and NDJSON shapes are documented (results, skipped lines, entries never sent): no --fields.
  refuseFieldsInJson(output, given.dryRun ? 'a dry run' : 'bulk results', ['json', 'ndjson']);
  if (given.dryRun) chooseColumns(PLAN_COLUMNS, output.fields, output.format);
  const ndjson = output.format === 'ndjson';
  // Without -o, --fields or --no-headers a run prints its summary only; with them, a row per result.
  const rows =
    output.explicit && !ndjson && !context.json && !given.dryRun ? resultExporter(output) : undefined;
  let target = { envName: '', where: '' };
  const shape = bulkShape(given.concurrency, given.pipelining);
  await runSheet(
    { file: given.file, strict: given.strict === true, ndjson },
    async () => {
      const connection = await connect(given, context, { shape });
      target = connection;
      // Messages (and the history) name the environment, or the URL when --base-url or PETINV_BASE_URL chose it.
      const history = () => historyFor(connection.baseUrl, context, connection.client.storeId ?? null);
      return { ...connection, envName: connection.where, history };
    },
    {
      dryRun: given.dryRun === true,
      all: given.all === true,
      force: given.force === true,
      concurrency: shape.connections * shape.pipelining,
      ndjson,
      output,
      rows,
      confirm: (question) => confirmChange(target, question, given.yes, context),
      question: (updates) => `Apply ${plural(updates, 'update')}`,
      command: given.file === undefined || given.file === '-' ? 'set -' : `set --file ${given.file}`,
      again: 'apply the same input again to send them (rows already right are skipped)',
      resend:
        'apply the same input again: a second send cannot apply one twice, and a row with an expected (from) is checked again; one without is written over any change made since, so read it back first (petinv get ID)',
      takenBackBy: 'petinv undo',
    },
    context,
  );
}
