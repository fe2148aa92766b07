import { stringifyJson } from '../contract/json';
import { PetinvError } from '../errors';
import type { CommandContext } from '../output/context';
import { plural } from '../output/plural';
import { paint } from '../output/terminal';
import type { BulkEntry, BulkInput } from './input';
import type { PipelineOptions } from './options';
import type { SheetPlan } from './plan';
import {
  conflictError,
  conflictResult,
  namedFirst,
  notSentJson,
  notSentRow,
  petList,
  resultJson,
  skippedJson,
} from './results';
import { type BulkOutcome, type BulkStop, FAILING_STREAK, UNREACHABLE_STREAK } from './run';

/** The end of a bulk run: its summary, the rows it left unsettled, and the failure that gives its exit status. */

const STOP_REASONS = {
  'output closed': 'the output was closed',
  interrupted: 'interrupted (Ctrl-C)',
  refused: 'the service refused the API key',
  unreachable: `the service could not be reached ${UNREACHABLE_STREAK} times in a row`,
  failing: `the service failed ${FAILING_STREAK} updates in a row`,
} as const;

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
  /** Refused for what was sent (an unknown pet, a bad quantity): sent again, it is refused again. */
  asSent?: boolean;
}

/** A run as its end is told. */
export interface FinishedRun {
  outcome: BulkOutcome;
  input: BulkInput;
  plan: SheetPlan;
  /** Updates that changed a quantity (the others were already right, sent with --all). */
  changed: number;
  /** Refused, or answered with another quantity (not applied as asked); and maybe applied. In any order. */
  failedRows: { refused: NotApplied[]; maybeApplied: NotApplied[] };
  envName: string;
  seconds: number;
}

type ReportOptions = Pick<PipelineOptions, 'ndjson' | 'again' | 'resend' | 'rows'>;

/** The rows left unsettled, each list in input order: failed or never sent, and of unknown outcome. */
type Unsettled = Record<'notApplied' | 'maybeApplied', readonly NotApplied[]>;

/** The summary as --json writes it, on its own line or beside a failing run's one error line. */
function summaryJson({ outcome, input, plan, changed }: FinishedRun, unsettled: Unsettled) {
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
    notCounted: input.entries.notCounted,
    notSent,
    stopped: stop?.reason ?? null,
    notApplied: unsettled.notApplied.map(({ input, petId }) => ({ input, petId })),
    maybeApplied: unsettled.maybeApplied,
  };
}

function writeSummary(
  run: FinishedRun,
  unsettled: Unsettled,
  options: ReportOptions,
  context: CommandContext,
) {
  const { outcome, input, plan, envName } = run;
  const { updated, failed, mismatched, unknown, notSent, stop } = outcome;
  const skipped = input.problems.length;
  const conflicts = plan.conflicts.length;
  if (context.json)
    return void context.stderr.write(`${stringifyJson({ summary: summaryJson(run, unsettled) })}\n`);
  const among = [
    mismatched > 0 && `${mismatched} answered with another quantity`,
    unknown > 0 && `${unknown} with outcome unknown, maybe applied`,
  ].filter(Boolean);
  const stopped = stop ? `stopped early, ${stopReason(stop)}: ` : '';
  const unsent = stop && notSent > 0 ? `, ${notSent} not sent` : '';
  const summary = `${stopped}updated ${updated} of ${plural(input.entries.length, 'pet')} in ${envName} in ${run.seconds.toFixed(1)}s; ${run.changed} changed, ${plan.alreadyRight} already right, ${failed} failed${among.length > 0 ? ` (${among.join(', ')})` : ''}, ${plural(conflicts, 'conflict')}, ${plural(skipped, input.unit)} skipped${input.entries.notCounted ? `, ${input.entries.notCounted} not counted` : ''}${unsent}`;
  const chalk = paint(context.color);
  context.stderr.write(
    `petinv: ${failed || skipped || stop || conflicts ? chalk.yellow(summary) : summary}\n`,
  );
  const { maybeApplied } = unsettled;
  const [asSent, notApplied] = [true, false].map((sent) =>
    unsettled.notApplied.filter((row) => !!row.asSent === sent),
  );
  if (asSent?.length)
    context.stderr.write(
      `petinv: refused as sent: ${nameRows(asSent, input.unit)}; sent again, ${asSent.length === 1 ? 'it' : 'they'} would be refused again: fix or remove ${asSent.length === 1 ? 'it' : 'them'} (each line above says why)\n`,
    );
  if (notApplied?.length)
    context.stderr.write(`petinv: not applied: ${nameRows(notApplied, input.unit)}; ${options.again}\n`);
  if (maybeApplied.length > 0)
    context.stderr.write(
      `petinv: outcome unknown, maybe applied: ${nameRows(maybeApplied, input.unit)}; ${options.resend}\n`,
    );
}

/** Rows as a summary names them: `line 4 (pet 12), ...`, the first few, the rest counted. */
const nameRows = (rows: readonly NotApplied[], unit: BulkInput['unit']) =>
  namedFirst(rows, (row) => `${unit} ${row.input} (pet ${row.petId})`, NAMED_NOT_APPLIED);

/** The end of a bulk run: the results still to write (the entries never sent), the summary, the failure. */
export function reportBulk(run: FinishedRun, options: ReportOptions, context: CommandContext) {
  const { outcome, input, plan, failedRows } = run;
  const { rows } = options;
  const outputOpen = outcome.stop?.reason !== 'output closed';
  // Entries are sent in input order: those never sent are the last `notSent`.
  const firstUnsent = plan.send.length - outcome.notSent;
  const unsentEntries = Array.from(
    { length: outcome.notSent },
    (_, index) => plan.send.at(firstUnsent + index) as BulkEntry,
  );
  if (outputOpen && (context.json || options.ndjson)) {
    const unsent = unsentEntries.map(notSentJson);
    // The results were written as JSON text once each; the array is joined from that text.
    if (context.json)
      context.stdout.write(
        `[${[
          ...input.problems.map(skippedJson),
          ...plan.conflicts.map((conflict) => stringifyJson(conflictResult(conflict, run.envName))),
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
  const failure = outputOpen ? failureOf(run, options) : undefined;
  // With --json a failing run's stderr is its one error line, the summary beside the error.
  if (context.json && failure) throw failure.withJson({ summary: summaryJson(run, unsettled) });
  writeSummary(run, unsettled, options, context);
  if (failure) throw failure;
}

/** The failure that gives a finished run its exit status, if any. */
function failureOf(run: FinishedRun, options: ReportOptions): PetinvError | undefined {
  const { outcome, input, plan, envName } = run;
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
  if (stop) return stoppedRunError(stop, run, options.again);
  // A service that kept another quantity than it was sent is worse than a refusal: its own exit status.
  if (outcome.mismatched > 0)
    return new PetinvError(
      'mismatch',
      `mismatch: the service answered ${plural(outcome.mismatched, 'update')} in ${envName} with another quantity than sent; read them back with petinv get`,
      { code: 'mismatch' },
    );
  // Sent whole, no answer or an unbelieved success: maybe applied, exit 8 as for one pet, not "refused".
  if (outcome.unknown > 0)
    return new PetinvError(
      'server',
      `outcome unknown: ${plural(outcome.unknown, 'update')} in ${envName} ${outcome.unknown === 1 ? 'was' : 'were'} sent whole but ${outcome.unbelieved === 0 ? 'no answer came' : outcome.unbelieved === outcome.unknown ? 'answered with a success that could not be taken for the item sent' : 'no answer came, or a success that could not be taken for the item sent'}; ${outcome.unknown === 1 ? 'it' : 'they'} may have been applied: ${options.resend}`,
      { code: 'outcome_unknown' },
    );
  // Skipped input counts as a partial failure too: a script must learn that not everything was applied.
  const skipped = input.problems.length;
  const { conflicts } = plan;
  // The conflicts a run that failed too kept are named in its message: the failure's exit status wins.
  const kept =
    conflicts.length > 0 ? `; ${plural(conflicts.length, 'conflict')} kept (pet ${petList(conflicts)})` : '';
  if (failed > 0 || skipped > 0)
    return new PetinvError(
      'partial',
      `${[failed > 0 && `${plural(failed, 'update')} failed`, skipped > 0 && `${plural(skipped, input.unit)} ${skipped === 1 ? 'was' : 'were'} skipped`].filter(Boolean).join(' and ')} in ${envName}${kept}`,
      { code: 'partial_failure' },
    );
  return conflicts.length > 0 ? conflictError(conflicts, envName) : undefined;
}

/**
 * A run stopped by a service that cannot be reached or fails every update, in the run's own words, not the
 * last pet's. An update of unknown outcome makes it outcome_unknown (8): something may have been written.
 */
function stoppedRunError(
  stop: Extract<BulkStop, { reason: 'unreachable' | 'failing' }>,
  { outcome, envName }: FinishedRun,
  again: string,
): PetinvError {
  const { unknown, failed, notSent, mismatched } = outcome;
  // Answered with another quantity, the service changed the pet: neither applied as asked nor not applied.
  const notApplied = failed - unknown - mismatched + notSent;
  const maybe = unknown > 0 ? ` and ${plural(unknown, 'update')} of unknown outcome (maybe applied)` : '';
  const last = stop.error;
  const message = `stopped early in ${envName}, ${stopReason(stop)}: ${plural(notApplied, 'update')} not applied${maybe}; ${again}. The last failure: ${last.message}`;
  return unknown > 0
    ? new PetinvError('server', message, { code: 'outcome_unknown', status: last.body.status })
    : new PetinvError(last.kind, message, { code: last.body.code, status: last.body.status });
}
