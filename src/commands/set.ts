import { readFileSync } from 'node:fs';
import { serializeItem } from '../api/json';
import type { InventoryItem } from '../api/schemas';
import { type BulkEntry, type BulkInput, parseBulkInput } from '../bulk/input';
import { type BulkResult, runBulk } from '../bulk/run';
import { PetinvError, usageError } from '../errors';
import { paint, renderItems } from '../output/inventory';
import { createProgress } from '../output/progress';
import { readAll } from '../output/prompt';
import { confirmChange, parseIntegerArgument, parsePetIdArgument, parseWholeNumber } from './arguments';
import { type ConnectionFlags, connect } from './connect';
import type { CommandContext } from './context';
import { readCurrent, writePlan } from './plan';

export interface SetFlags extends ConnectionFlags {
  file?: string;
  strict?: boolean;
  concurrency?: string;
  dryRun?: boolean;
  yes?: boolean;
  ndjson?: boolean;
}

/** One updated item: a row on a terminal, a TSV line in a pipe, the item itself with --json. */
function writeItem(item: InventoryItem, context: CommandContext, envName: string) {
  if (context.json) context.stdout.write(`${serializeItem(item)}\n`);
  else
    context.stdout.write(
      renderItems([item], context.stdout.isTTY ? 'table' : 'tsv', { color: context.color, envName }),
    );
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
    const quantity = parseIntegerArgument(quantityText, 'quantity');
    refuseBulkOnlyOptions(flags);
    const { client, envName } = await connect(flags, context);
    if (flags.dryRun) {
      const before = await readCurrent(client, petId, envName);
      writePlan([{ petId, to: quantity, before }], 'single', false, context, envName);
      return;
    }
    await confirmChange(envName, `Set pet ${petId} to ${quantity}`, flags.yes, context);
    writeItem(await client.updateInventory(petId, quantity), context, envName);
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

function readBulkSource(flags: SetFlags, context: CommandContext): Promise<string> | string {
  if (flags.file === undefined || flags.file === '-') return readAll(context.stdin);
  try {
    return readFileSync(flags.file, 'utf8');
  } catch (error) {
    throw usageError(
      `cannot read --file ${flags.file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
}

function reportProblems(input: BulkInput, context: CommandContext, strict: boolean | undefined) {
  for (const problem of input.problems) {
    const message = `${input.unit} ${problem.line}: ${problem.message}`;
    context.stderr.write(
      context.json
        ? `${JSON.stringify({ [input.unit]: problem.line, skipped: true, error: { code: 'bad_input', message } })}\n`
        : `petinv: ${message}${strict ? '' : ' (skipped)'}\n`,
    );
  }
  if (strict && input.problems.length > 0) {
    throw usageError(
      `--strict: ${input.problems.length} bad ${input.unit}${input.problems.length === 1 ? '' : 's'}; nothing was sent`,
    );
  }
}

async function runBulkSet(flags: SetFlags, context: CommandContext) {
  const concurrency = parseWholeNumber(flags.concurrency, '--concurrency', 1, 256) ?? 8;
  const input = parseBulkInput(await readBulkSource(flags, context));
  reportProblems(input, context, flags.strict);
  const { client, envName } = await connect(flags, context);
  const chalk = paint(context.color);

  if (flags.dryRun) {
    const current = new Map((await client.listInventory()).map((item) => [item.petId, item]));
    const plan = input.entries.map((entry) => ({
      petId: entry.petId,
      to: entry.quantity,
      before: current.get(entry.petId),
    }));
    writePlan(plan, 'bulk', flags.ndjson === true, context, envName);
    return;
  }

  await confirmChange(envName, `Apply ${input.entries.length} updates`, flags.yes, context);
  const progress =
    context.json || flags.ndjson
      ? createProgress(0, context.stderr)
      : createProgress(input.entries.length, context.stderr);
  const started = performance.now();
  const results = await runBulk(
    input.entries,
    concurrency,
    (entry: BulkEntry) => client.updateInventory(entry.petId, entry.quantity),
    (result) => {
      progress.advance(result.ok);
      if (flags.ndjson) context.stdout.write(`${resultJson(result, input.unit)}\n`);
      else if (!result.ok && !context.json) {
        // On a terminal, clear the progress bar's line first.
        const clear = context.stderr.isTTY ? '\r\u001b[K' : '';
        context.stderr.write(`${clear}petinv: ${input.unit} ${result.line}: ${result.error.message}\n`);
      }
    },
  );
  progress.finish();
  if (context.json)
    context.stdout.write(`[${results.map((result) => resultJson(result, input.unit)).join(',')}]\n`);

  const failed = results.filter((result) => !result.ok).length;
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const summary = `updated ${results.length - failed} of ${input.entries.length} pets in ${envName} in ${seconds}s; ${failed} failed, ${input.problems.length} ${input.unit}${input.problems.length === 1 ? '' : 's'} skipped`;
  context.stderr.write(
    context.json
      ? `${JSON.stringify({ summary: { updated: results.length - failed, failed, skipped: input.problems.length } })}\n`
      : `petinv: ${failed || input.problems.length ? chalk.yellow(summary) : summary}\n`,
  );
  // Skipped input counts as a partial failure too: a script must learn that not everything was applied.
  if (failed > 0 || input.problems.length > 0) {
    throw new PetinvError(
      'partial',
      `${failed} update${failed === 1 ? '' : 's'} failed and ${input.problems.length} ${input.unit}${input.problems.length === 1 ? ' was' : 's were'} skipped in ${envName}`,
      { code: 'partial_failure' },
    );
  }
}

function resultJson(result: BulkResult, unit: string): string {
  return result.ok
    ? `{"${unit}":${result.line},"ok":true,"item":${serializeItem(result.item)}}`
    : `{"${unit}":${result.line},"ok":false,"petId":${result.petId},"quantity":${result.quantity},"error":${JSON.stringify(result.error.body)}}`;
}
