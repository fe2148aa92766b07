import { maybeApplied } from '../client/write-outcome';
import { stringifyJson } from '../contract/json';
import type { InventoryItem } from '../contract/schemas';
import { PetinvError } from '../errors';
import type { OutputChoice } from '../output/choose';
import type { CommandContext } from '../output/context';
import { type Column, createExporter, type Exporter } from '../output/exporter';
import { paint } from '../output/inventory';
import { plural } from '../output/plural';
import type { BulkEntries } from './entries';
import type { BulkEntry, BulkInput, BulkProblem } from './input';
import { type BulkOutcome, type BulkResult, type BulkStop, FAILING_STREAK, UNREACHABLE_STREAK } from './run';

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
          ...(maybeApplied(result.error) && { maybeApplied: true }),
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
  result: 'updated' | 'failed' | 'maybe applied' | 'not sent' | 'conflict';
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
        result: maybeApplied(result.error) ? 'maybe applied' : 'failed',
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

/** A row whose `from` no longer matches the pet's quantity: someone changed it since the sheet was read. */
export interface Conflict {
  line: number;
  petId: bigint;
  from: number;
  current: number;
  wanted: number;
}

/** What the plan decided, as the report tells it. */
export interface PlannedRun {
  /** The updates sent (or to send), in input order. */
  send: BulkEntries;
  /** Rows whose pet already holds the quantity wanted: not sent (with --all, sent all the same). */
  alreadyRight: number;
  conflicts: readonly Conflict[];
}

/** A conflict as a result (a JSON value: --json's array holds these, --ndjson prints each). */
export function conflictResult(conflict: Conflict, envName: string) {
  return {
    input: conflict.line,
    ok: false,
    conflict: true,
    petId: conflict.petId,
    from: conflict.from,
    current: conflict.current,
    quantity: conflict.wanted,
    error: { code: 'conflict', message: conflictMessage(conflict, envName), status: null },
  };
}

export function conflictMessage(conflict: Conflict, envName: string): string {
  return `pet ${conflict.petId} holds ${conflict.current} in ${envName}, not ${conflict.from} as expected (its from): someone changed it since; not set to ${conflict.wanted} (--force sets it anyway)`;
}

/** A conflict as a row: its wanted quantity, and the message with from and current. */
export const conflictRow = (conflict: Conflict, message: string): BulkRow => ({
  input: conflict.line,
  result: 'conflict',
  petId: conflict.petId,
  quantity: conflict.wanted,
  status: null,
  error: 'conflict',
  message,
});

/**
 * The results of a run as rows in a text format (-o table|tsv|csv, --fields): each as it completes, the
 * entries never sent last; skipped input lines stay on stderr, as without -o.
 */
export function resultExporter(output: OutputChoice): Exporter<BulkRow> {
  return createExporter(BULK_COLUMNS, output);
}

/** The entries never sent: the last `notSent` of those sent, since entries are sent in input order. */
function* notSentEntries(input: Pick<BulkInput, 'entries'>, outcome: BulkOutcome): Generator<BulkEntry> {
  const { length } = input.entries;
  for (let index = length - outcome.notSent; index < length; index++)
    yield input.entries.at(index) as BulkEntry;
}

const STOP_REASONS = {
  'output closed': 'the output was closed',
  interrupted: 'interrupted (Ctrl-C)',
  refused: 'the service refused the API key',
  unreachable: `the service could not be reached ${UNREACHABLE_STREAK} times in a row`,
  failing: `the service failed ${FAILING_STREAK} updates in a row`,
} as const;

/** Why a run stopped, in words. */
function stopReason(stop: BulkStop): string {
  // Not "could not be reached" when the last of the streak was reached and sent: its outcome is unknown.
  if (stop.reason === 'unreachable' && stop.error.body.code === 'outcome_unknown')
    return `the connection broke or no answer came ${UNREACHABLE_STREAK} times in a row`;
  return STOP_REASONS[stop.reason];
}

/** How many lines of rows not applied a summary names; the rest are counted (--json names them all). */
const NAMED_NOT_APPLIED = 20;

/** A row of the input a stopped run leaves unsettled: with them a person can go on. */
export interface NotApplied {
  input: number;
  petId: bigint;
}

/** The failed rows of a run, in any order, as the report tells them apart. */
export interface FailedRows {
  /** Refused, or answered with another quantity: not applied as asked. */
  refused: readonly NotApplied[];
  /** Sent whole with no answer, or answered with a success that cannot be believed: maybe applied. */
  maybeApplied: readonly NotApplied[];
}

/** The rows of a stopped run left unsettled, each list in input order. */
interface Unsettled {
  /** Failed (refused, another quantity) or never sent. */
  notApplied: readonly NotApplied[];
  /** Of unknown outcome: neither counted as applied nor named as not applied. */
  maybeApplied: readonly NotApplied[];
}

/** The summary as --json writes it, on its own line or beside a failing run's one error line. */
function summaryJson(
  outcome: BulkOutcome,
  input: BulkInput,
  plan: PlannedRun,
  changed: number,
  unsettled: Unsettled,
) {
  const { updated, failed, mismatched, unknown, notSent, stop } = outcome;
  return {
    updated,
    changed,
    alreadyRight: plan.alreadyRight,
    failed,
    mismatched,
    unknown,
    conflicts: plan.conflicts.length,
    skipped: input.problems.length,
    notCounted: input.entries.notCounted ?? 0,
    notSent,
    stopped: stop?.reason ?? null,
    notApplied: stop ? unsettled.notApplied : [],
    maybeApplied: stop ? unsettled.maybeApplied : [],
  };
}

function writeSummary(
  outcome: BulkOutcome,
  input: BulkInput,
  plan: PlannedRun,
  changed: number,
  unsettled: Unsettled,
  again: string,
  resend: string,
  envName: string,
  seconds: number,
  context: CommandContext,
) {
  const { updated, failed, mismatched, unknown, notSent, stop } = outcome;
  const skipped = input.problems.length;
  const { alreadyRight } = plan;
  const conflicts = plan.conflicts.length;
  if (context.json) {
    context.stderr.write(
      `${stringifyJson({ summary: summaryJson(outcome, input, plan, changed, unsettled) })}\n`,
    );
    return;
  }
  const among = [
    mismatched > 0 && `${mismatched} answered with another quantity`,
    unknown > 0 && `${unknown} with outcome unknown, maybe applied`,
  ].filter(Boolean);
  const stopped = stop ? `stopped early, ${stopReason(stop)}: ` : '';
  const unsent = stop ? `, ${notSent} not sent` : '';
  const summary = `${stopped}updated ${updated} of ${plural(input.entries.length, 'pet')} in ${envName} in ${seconds.toFixed(1)}s; ${changed} changed, ${alreadyRight} already right, ${failed} failed${among.length > 0 ? ` (${among.join(', ')})` : ''}, ${plural(conflicts, 'conflict')}, ${plural(skipped, input.unit)} skipped${input.entries.notCounted ? `, ${input.entries.notCounted} not counted` : ''}${unsent}`;
  const chalk = paint(context.color);
  context.stderr.write(
    `petinv: ${failed || skipped || stop || conflicts ? chalk.yellow(summary) : summary}\n`,
  );
  if (!stop) return;
  const { notApplied, maybeApplied } = unsettled;
  if (notApplied.length > 0)
    context.stderr.write(`petinv: not applied: ${nameRows(notApplied, input.unit)}; ${again}\n`);
  if (maybeApplied.length > 0)
    context.stderr.write(
      `petinv: outcome unknown, maybe applied: ${nameRows(maybeApplied, input.unit)}; ${resend} to settle ${maybeApplied.length === 1 ? 'it' : 'them'} (the quantities are absolute, so that is safe)\n`,
    );
}

/** Rows as a summary names them: `line 4 (pet 12), ...`, the first few, the rest counted. */
function nameRows(rows: readonly NotApplied[], unit: BulkInput['unit']): string {
  const named = rows
    .slice(0, NAMED_NOT_APPLIED)
    .map((row) => `${unit} ${row.input} (pet ${row.petId})`)
    .join(', ');
  return rows.length > NAMED_NOT_APPLIED ? `${named} and ${rows.length - NAMED_NOT_APPLIED} more` : named;
}

/**
 * The end of a bulk run: the results (--json's one array, and with --json or --ndjson the entries never
 * sent), the summary on stderr, and the failure that gives the exit status, if any.
 */
export function reportBulk(
  outcome: BulkOutcome,
  input: BulkInput,
  plan: PlannedRun,
  /** Updates that changed a quantity (the others were already right, sent with --all). */
  changed: number,
  /** The results stream as NDJSON. */
  ndjson: boolean,
  context: CommandContext,
  envName: string,
  seconds: number,
  /** The rows that failed, in any order (the rows never sent are known from the outcome). */
  failedRows: FailedRows,
  /** How the rows not applied of a stopped run can be applied: what to run again. */
  again: string,
  /** What settles the updates whose outcome is unknown: sends them once more. */
  resend: string,
  /** -o table|tsv|csv: the rows written so far as results came; the entries never sent and the end follow. */
  rows?: Exporter<BulkRow>,
) {
  const { stop } = outcome;
  const outputOpen = stop?.reason !== 'output closed';
  const unsentEntries = Array.from(notSentEntries({ entries: plan.send }, outcome));
  if (outputOpen && (context.json || ndjson)) {
    const unsent = unsentEntries.map(notSentJson);
    // The results were written as JSON text once each; the array is joined from that text.
    if (context.json)
      context.stdout.write(
        `[${[
          ...input.problems.map(skippedJson),
          ...plan.conflicts.map((conflict) => stringifyJson(conflictResult(conflict, envName))),
          ...(outcome.results ?? []).map(resultJson),
          ...unsent,
        ].join(',')}]\n`,
      );
    else if (unsent.length > 0) context.stdout.write(`${unsent.join('\n')}\n`);
  } else if (outputOpen && rows) context.stdout.write(rows.rows(unsentEntries.map(notSentRow)) + rows.end());
  const byInput = (a: NotApplied, b: NotApplied) => a.input - b.input;
  const unsettled: Unsettled = {
    notApplied: [
      ...failedRows.refused,
      ...unsentEntries.map((entry) => ({ input: entry.line, petId: entry.petId })),
    ].sort(byInput),
    maybeApplied: [...failedRows.maybeApplied].sort(byInput),
  };
  // A closed output ends the run quietly; the CLI entry gives the exit status.
  const failure = outputOpen ? failureOf(outcome, input, plan, envName, resend, again) : undefined;
  // With --json a failing run's stderr is its one error line, the summary beside the error.
  if (context.json && failure)
    throw failure.withJson({ summary: summaryJson(outcome, input, plan, changed, unsettled) });
  writeSummary(outcome, input, plan, changed, unsettled, again, resend, envName, seconds, context);
  if (failure) throw failure;
}

/** The failure that gives a finished run its exit status, if any. */
function failureOf(
  outcome: BulkOutcome,
  input: BulkInput,
  plan: PlannedRun,
  envName: string,
  resend: string,
  /** How the rows a stopped run did not apply are applied: what to run again. */
  again: string,
): PetinvError | undefined {
  const { stop, failed } = outcome;
  if (stop?.reason === 'interrupted')
    return new PetinvError(
      'interrupted',
      `interrupted: ${plural(outcome.notSent, 'update')} of ${plan.send.length} never sent to ${envName}`,
      { code: 'interrupted' },
    );
  if (stop?.reason === 'output closed') return undefined;
  // A refused key is the run's failure as it is one pet's: every further request would meet it.
  if (stop?.reason === 'refused') return stop.error;
  if (stop) return stoppedRunError(stop, outcome, envName, again);
  // A service that kept another quantity than it was sent is worse than a refusal: its own exit status.
  if (outcome.mismatched > 0)
    return new PetinvError(
      'mismatch',
      `mismatch: the service answered ${plural(outcome.mismatched, 'update')} in ${envName} with another quantity than sent; read them back with petinv get`,
      { code: 'mismatch' },
    );
  // A write sent whole whose answer never came, or came as a success that could not be taken for the item
  // sent, may have been applied: the broken-response status (8), as for one pet, so a script tells "maybe
  // written" from "refused"; the summary names how many.
  if (outcome.unknown > 0)
    return new PetinvError(
      'server',
      `outcome unknown: ${plural(outcome.unknown, 'update')} in ${envName} ${outcome.unknown === 1 ? 'was' : 'were'} sent whole but ${outcome.unbelieved === 0 ? 'no answer came' : outcome.unbelieved === outcome.unknown ? 'answered with a success that could not be taken for the item sent' : 'no answer came, or a success that could not be taken for the item sent'}; ${outcome.unknown === 1 ? 'it' : 'they'} may have been applied: ${resend} (the quantities are absolute, so that is safe)`,
      { code: 'outcome_unknown' },
    );
  // Skipped input counts as a partial failure too: a script must learn that not everything was applied.
  const skipped = input.problems.length;
  if (failed > 0 || skipped > 0)
    return new PetinvError(
      'partial',
      `${plural(failed, 'update')} failed and ${plural(skipped, input.unit)} ${skipped === 1 ? 'was' : 'were'} skipped in ${envName}${conflictsKept(plan.conflicts)}`,
      { code: 'partial_failure' },
    );
  if (plan.conflicts.length > 0) return conflictError(plan.conflicts, envName);
  return undefined;
}

/**
 * A run stopped by a service that cannot be reached, or that fails every update: the run's own words (why,
 * and what is left), not the last pet's. Any update of unknown outcome makes it the broken-response status
 * (8, outcome_unknown), as for a finished run: a script must learn that something may have been written.
 */
function stoppedRunError(
  stop: Extract<BulkStop, { reason: 'unreachable' | 'failing' }>,
  outcome: BulkOutcome,
  envName: string,
  again: string,
): PetinvError {
  const { unknown, failed, notSent } = outcome;
  const notApplied = failed - unknown + notSent;
  const maybe = unknown > 0 ? ` and ${plural(unknown, 'update')} of unknown outcome (maybe applied)` : '';
  const last = stop.error;
  const message = `stopped early in ${envName}, ${stopReason(stop)}: ${plural(notApplied, 'update')} not applied${maybe}; ${again}. The last failure: ${last.message}`;
  return unknown > 0
    ? new PetinvError('server', message, { code: 'outcome_unknown', status: last.body.status })
    : new PetinvError(last.kind, message, { code: last.body.code, status: last.body.status });
}

/** The conflicts a run that failed too kept, for its message: the failure's exit status wins. */
function conflictsKept(conflicts: readonly Conflict[]): string {
  if (conflicts.length === 0) return '';
  const pets = conflicts.slice(0, 10).map((conflict) => conflict.petId);
  const more = conflicts.length > 10 ? ` and ${conflicts.length - 10} more` : '';
  return `; ${plural(conflicts.length, 'conflict')} kept (pet ${pets.join(', ')}${more})`;
}

/** Conflicts end a run with their own exit status: nothing failed, but not everything was written. */
export function conflictError(conflicts: readonly Conflict[], envName: string): PetinvError {
  const pets = conflicts
    .slice(0, 10)
    .map((conflict) => conflict.petId)
    .join(', ');
  const more = conflicts.length > 10 ? ` and ${conflicts.length - 10} more` : '';
  return new PetinvError(
    'conflict',
    `${plural(conflicts.length, 'conflict')} in ${envName}: pet ${pets}${more} changed since the input was read, and kept ${conflicts.length === 1 ? 'its' : 'their'} quantity; check them, or pass --force to write anyway`,
    { code: 'conflict' },
  );
}
