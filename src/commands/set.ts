import { createReadStream } from 'node:fs';
import { serializeItem } from '../api/json';
import type { InventoryItem } from '../api/schemas';
import { type BulkEntry, type BulkInput, type BulkProblem, readBulkInput } from '../bulk/input';
import { type BulkOutcome, type BulkResult, runBulk, UNREACHABLE_STREAK } from '../bulk/run';
import { PetinvError, usageError } from '../errors';
import { chooseOutput, type OutputChoice } from '../output/choose';
import { checkItemFields, itemExporter, paint } from '../output/inventory';
import { plural } from '../output/plural';
import { createProgress } from '../output/progress';
import type { SetFlags } from '../program';
import { confirmChange, parseIntegerArgument, parsePetIdArgument } from './arguments';
import { connect } from './connect';
import type { CommandContext } from './context';
import { DEFAULT_CONCURRENCY } from './options';
import { readCurrent, writePlan } from './plan';

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
    const quantity = parseIntegerArgument(quantityText, 'quantity');
    refuseBulkOnlyOptions(flags);
    const output = chooseOutput(flags, context, context.stdout.isTTY ? 'table' : 'tsv');
    checkItemFields(output);
    const { client, envName } = await connect(flags, context);
    if (flags.dryRun) {
      const before = await readCurrent(client, petId, envName);
      writePlan([{ petId, to: quantity, before }], 'single', false, context, envName);
      return;
    }
    await confirmChange(envName, `Set pet ${petId} to ${quantity}`, flags.yes, context);
    writeItem(await client.updateInventory(petId, quantity), output, context, envName);
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

/** The bulk input as a stream: stdin, or the file, read as it arrives (see readBulkInput). */
function openBulkSource(flags: SetFlags, context: CommandContext): Promise<AsyncIterable<Buffer | string>> {
  if (flags.file === undefined || flags.file === '-') return Promise.resolve(context.stdin);
  const file = flags.file;
  return new Promise((resolve, reject) => {
    const stream = createReadStream(file);
    stream.once('open', () => resolve(stream));
    stream.once('error', (error: NodeJS.ErrnoException) =>
      reject(usageError(`cannot read --file ${file}: ${error.code ?? error.message}`)),
    );
  });
}

/**
 * Bad input lines: in a run that streams results (--ndjson, --json) they are results too, so a script
 * that selects the failures sees them; otherwise each is a line on stderr. --strict stops here.
 */
function reportProblems(input: BulkInput, flags: SetFlags, context: CommandContext) {
  const inResults = !flags.strict && (context.json || flags.ndjson);
  for (const problem of input.problems) {
    // --json prints them at the head of its one array at the end.
    if (inResults) {
      if (flags.ndjson) context.stdout.write(`${skippedJson(problem)}\n`);
    } else if (context.json) context.stderr.write(`${skippedJson(problem)}\n`);
    else
      context.stderr.write(
        `petinv: ${input.unit} ${problem.line}: ${problem.message}${flags.strict ? '' : ' (skipped)'}\n`,
      );
  }
  if (flags.strict && input.problems.length > 0) {
    throw usageError(`--strict: ${plural(input.problems.length, `bad ${input.unit}`)}; nothing was sent`);
  }
}

async function runBulkSet(flags: SetFlags, context: CommandContext) {
  const concurrency = flags.concurrency ?? DEFAULT_CONCURRENCY;
  if (context.json && flags.ndjson) throw usageError('choose one of --json and --ndjson');
  const input = await readBulkInput(await openBulkSource(flags, context)).catch((error: unknown) => {
    if (error instanceof PetinvError) throw error;
    const { code, message } = error as NodeJS.ErrnoException;
    throw usageError(
      `cannot read ${flags.file === undefined ? 'stdin' : `--file ${flags.file}`}: ${code ?? message}`,
    );
  });
  reportProblems(input, flags, context);
  const { client, envName } = await connect(flags, context);
  if (flags.dryRun) {
    const current = new Map((await client.listInventory()).map((item) => [item.petId, item]));
    const plan = Array.from(input.entries, (entry) => ({
      petId: entry.petId,
      to: entry.quantity,
      before: current.get(entry.petId),
    }));
    // --json: the skipped lines head the one array, as in a real run (--ndjson printed them already).
    writePlan(plan, 'bulk', flags.ndjson === true, context, envName, input.problems.map(skippedJson));
    // The real run would end in exit 9: so must its rehearsal, or `--dry-run && set` goes ahead.
    const skipped = input.problems.length;
    if (skipped > 0)
      throw new PetinvError(
        'partial',
        `dry run: ${plural(skipped, input.unit)} ${skipped === 1 ? 'was' : 'were'} skipped; nothing was written to ${envName}`,
        { code: 'partial_failure' },
      );
    return;
  }

  await confirmChange(envName, `Apply ${input.entries.length} updates`, flags.yes, context);
  const stream = context.json || flags.ndjson;
  const progress = createProgress(stream ? 0 : input.entries.length, context.stderr);
  const started = performance.now();
  const outcome = await runBulk(input.entries, {
    concurrency,
    update: (entry: BulkEntry) => client.updateInventory(entry.petId, entry.quantity),
    onResult: (result) => {
      progress.advance(result.ok);
      if (flags.ndjson) context.stdout.write(`${resultJson(result)}\n`);
      else if (!result.ok && !context.json) {
        // On a terminal, clear the progress bar's line first.
        const clear = context.stderr.isTTY ? '\r\u001b[K' : '';
        context.stderr.write(`${clear}petinv: ${input.unit} ${result.line}: ${result.error.message}\n`);
      }
    },
    outputClosed: context.outputClosed,
    keepResults: context.json,
  });
  progress.finish();
  if (context.json)
    context.stdout.write(
      `[${[...input.problems.map(skippedJson), ...(outcome.results ?? []).map(resultJson)].join(',')}]\n`,
    );
  writeSummary(outcome, input, envName, (performance.now() - started) / 1000, context);

  const { stop, failed } = outcome;
  // A closed output ends the run quietly; the CLI entry gives the exit status.
  if (stop?.reason === 'output closed') return;
  if (stop) throw stop.error;
  // Skipped input counts as a partial failure too: a script must learn that not everything was applied.
  const skipped = input.problems.length;
  if (failed > 0 || skipped > 0) {
    throw new PetinvError(
      'partial',
      `${plural(failed, 'update')} failed and ${plural(skipped, input.unit)} ${skipped === 1 ? 'was' : 'were'} skipped in ${envName}`,
      { code: 'partial_failure' },
    );
  }
}

const STOP_REASONS = {
  'output closed': 'the output was closed',
  refused: 'the service refused the API key',
  unreachable: `the service could not be reached ${UNREACHABLE_STREAK} times in a row`,
} as const;

function writeSummary(
  outcome: BulkOutcome,
  input: BulkInput,
  envName: string,
  seconds: number,
  context: CommandContext,
) {
  const { updated, failed, notSent, stop } = outcome;
  const skipped = input.problems.length;
  if (context.json) {
    context.stderr.write(
      `${JSON.stringify({ summary: { updated, failed, skipped, notSent, stopped: stop?.reason ?? null } })}\n`,
    );
    return;
  }
  const stopped = stop ? `stopped early, ${STOP_REASONS[stop.reason]}: ` : '';
  const unsent = stop ? `, ${notSent} not sent` : '';
  const summary = `${stopped}updated ${updated} of ${plural(input.entries.length, 'pet')} in ${envName} in ${seconds.toFixed(1)}s; ${failed} failed${unsent}, ${plural(skipped, input.unit)} skipped`;
  const chalk = paint(context.color);
  context.stderr.write(`petinv: ${failed || skipped || stop ? chalk.yellow(summary) : summary}\n`);
}

/**
 * One result of a bulk run as JSON. `input` is where the entry stood in the input (its line, or its
 * position in a JSON array); `item` is the updated item as the service returned it.
 */
function resultJson(result: BulkResult): string {
  return result.ok
    ? `{"input":${result.line},"ok":true,"item":${serializeItem(result.item)}}`
    : `{"input":${result.line},"ok":false,"petId":${result.petId},"quantity":${result.quantity},"error":${JSON.stringify(result.error.body)}}`;
}

function skippedJson(problem: BulkProblem): string {
  return JSON.stringify({
    input: problem.line,
    ok: false,
    skipped: true,
    error: { code: 'bad_input', message: problem.message, status: 0 },
  });
}
