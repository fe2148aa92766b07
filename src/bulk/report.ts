import { stringifyJson } from '../api/json';
import type { InventoryItem } from '../api/schemas';
import type { CommandContext } from '../commands/context';
import { PetinvError } from '../errors';
import type { OutputChoice } from '../output/choose';
import { type Column, createExporter, type Exporter } from '../output/exporter';
import { paint } from '../output/inventory';
import { plural } from '../output/plural';
import type { SetFlags } from '../program';
import type { BulkEntry, BulkInput, BulkProblem } from './input';
import { type BulkOutcome, type BulkResult, UNREACHABLE_STREAK } from './run';

/** An item as JSON values, in the service's field order whatever order its object has. */
const itemValue = ({ petId, quantity, status }: InventoryItem) => ({ petId, quantity, status });

/**
 * One result of a bulk run as JSON. `input` is where the entry stood in the input (its line, or its
 * position in a JSON array); `item` is the updated item as the service returned it.
 */
export function resultJson(result: BulkResult): string {
  return stringifyJson(
    result.ok
      ? { input: result.line, ok: true, item: itemValue(result.item) }
      : {
          input: result.line,
          ok: false,
          petId: result.petId,
          quantity: result.quantity,
          error: result.error.body,
        },
  );
}

/** A skipped input line as a result (a JSON value: --json heads its array with these). */
export function skippedResult(problem: BulkProblem) {
  return {
    input: problem.line,
    ok: false,
    skipped: true,
    error: { code: 'bad_input', message: problem.message, status: null },
  };
}

export const skippedJson = (problem: BulkProblem): string => stringifyJson(skippedResult(problem));

/** An entry a run that stopped early never sent. */
function notSentJson(entry: BulkEntry): string {
  return stringifyJson({
    input: entry.line,
    ok: false,
    notSent: true,
    petId: entry.petId,
    quantity: entry.quantity,
  });
}

/** A result, or an entry never sent, as a row of -o table|tsv|csv. */
export interface BulkRow {
  input: number;
  result: 'updated' | 'failed' | 'not sent';
  petId: bigint;
  quantity: number;
  status: string | null;
  error: string | null;
  message: string | null;
}

const BULK_COLUMNS: readonly Column<BulkRow>[] = [
  { key: 'input', heading: 'INPUT', value: (row) => row.input, align: 'right' },
  { key: 'result', heading: 'RESULT', value: (row) => row.result },
  { key: 'petId', heading: 'PET ID', value: (row) => row.petId, align: 'right' },
  { key: 'quantity', heading: 'QUANTITY', value: (row) => row.quantity, align: 'right' },
  { key: 'status', heading: 'STATUS', value: (row) => row.status },
  { key: 'error', heading: 'ERROR', value: (row) => row.error },
  { key: 'message', heading: 'MESSAGE', value: (row) => row.message },
];

export function resultRow(result: BulkResult): BulkRow {
  const { line: input, petId } = result;
  return result.ok
    ? {
        input,
        result: 'updated',
        petId,
        quantity: result.item.quantity,
        status: result.item.status,
        error: null,
        message: null,
      }
    : {
        input,
        result: 'failed',
        petId,
        quantity: result.quantity,
        status: null,
        error: result.error.body.code,
        message: result.error.body.message,
      };
}

const notSentRow = (entry: BulkEntry): BulkRow => ({
  input: entry.line,
  result: 'not sent',
  petId: entry.petId,
  quantity: entry.quantity,
  status: null,
  error: null,
  message: null,
});

/**
 * The results of a run as rows in a text format (-o table|tsv|csv, --fields): each as it completes, the
 * entries never sent last; skipped input lines stay on stderr, as without -o.
 */
export function resultExporter(output: OutputChoice): Exporter<BulkRow> {
  return createExporter(BULK_COLUMNS, output);
}

/** The entries never sent: the last `notSent` of the input, since entries are sent in input order. */
function* notSentEntries(input: BulkInput, outcome: BulkOutcome): Generator<BulkEntry> {
  const { length } = input.entries;
  for (let index = length - outcome.notSent; index < length; index++)
    yield input.entries.at(index) as BulkEntry;
}

const STOP_REASONS = {
  'output closed': 'the output was closed',
  interrupted: 'interrupted (Ctrl-C)',
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
  const { updated, failed, mismatched, unknown, notSent, stop } = outcome;
  const skipped = input.problems.length;
  if (context.json) {
    context.stderr.write(
      `${stringifyJson({ summary: { updated, failed, mismatched, unknown, skipped, notSent, stopped: stop?.reason ?? null } })}\n`,
    );
    return;
  }
  const among = [
    mismatched > 0 && `${mismatched} answered with another quantity`,
    unknown > 0 && `${unknown} with outcome unknown, maybe applied`,
  ].filter(Boolean);
  // Not "could not be reached" when the last of the streak was reached and sent: its outcome is unknown.
  const why =
    stop?.reason === 'unreachable' && stop.error.body.code === 'outcome_unknown'
      ? `the connection broke or no answer came ${UNREACHABLE_STREAK} times in a row`
      : stop && STOP_REASONS[stop.reason];
  const stopped = stop ? `stopped early, ${why}: ` : '';
  const unsent = stop ? `, ${notSent} not sent` : '';
  const summary = `${stopped}updated ${updated} of ${plural(input.entries.length, 'pet')} in ${envName} in ${seconds.toFixed(1)}s; ${failed} failed${among.length > 0 ? ` (${among.join(', ')})` : ''}${unsent}, ${plural(skipped, input.unit)} skipped`;
  const chalk = paint(context.color);
  context.stderr.write(`petinv: ${failed || skipped || stop ? chalk.yellow(summary) : summary}\n`);
}

/**
 * The end of a bulk run: the results (--json's one array, and with --json or --ndjson the entries never
 * sent), the summary on stderr, and the failure that gives the exit status, if any.
 */
export function reportBulk(
  outcome: BulkOutcome,
  input: BulkInput,
  flags: SetFlags,
  context: CommandContext,
  envName: string,
  seconds: number,
  /** -o table|tsv|csv: the rows written so far as results came; the entries never sent and the end follow. */
  rows?: Exporter<BulkRow>,
) {
  const { stop, failed } = outcome;
  const outputOpen = stop?.reason !== 'output closed';
  if (outputOpen && (context.json || flags.ndjson)) {
    const unsent = Array.from(notSentEntries(input, outcome), notSentJson);
    // The results were written as JSON text once each; the array is joined from that text.
    if (context.json)
      context.stdout.write(
        `[${[...input.problems.map(skippedJson), ...(outcome.results ?? []).map(resultJson), ...unsent].join(',')}]\n`,
      );
    else if (unsent.length > 0) context.stdout.write(`${unsent.join('\n')}\n`);
  } else if (outputOpen && rows)
    context.stdout.write(rows.rows(Array.from(notSentEntries(input, outcome), notSentRow)) + rows.end());
  writeSummary(outcome, input, envName, seconds, context);

  // A closed output ends the run quietly; the CLI entry gives the exit status.
  if (!outputOpen) return;
  if (stop?.reason === 'interrupted')
    throw new PetinvError(
      'interrupted',
      `interrupted: ${plural(outcome.notSent, 'update')} of ${input.entries.length} never sent to ${envName}`,
      { code: 'interrupted' },
    );
  if (stop) throw stop.error;
  // A service that kept another quantity than it was sent is worse than a refusal: its own exit status.
  if (outcome.mismatched > 0)
    throw new PetinvError(
      'mismatch',
      `mismatch: the service answered ${plural(outcome.mismatched, 'update')} in ${envName} with another quantity than sent; read them back with petinv get`,
      { code: 'mismatch' },
    );
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
