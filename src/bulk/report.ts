import { serializeItem } from '../api/json';
import type { CommandContext } from '../commands/context';
import { PetinvError } from '../errors';
import { paint } from '../output/inventory';
import { plural } from '../output/plural';
import type { SetFlags } from '../program';
import type { BulkEntry, BulkInput, BulkProblem } from './input';
import { type BulkOutcome, type BulkResult, UNREACHABLE_STREAK } from './run';

/**
 * One result of a bulk run as JSON. `input` is where the entry stood in the input (its line, or its
 * position in a JSON array); `item` is the updated item as the service returned it.
 */
export function resultJson(result: BulkResult): string {
  return result.ok
    ? `{"input":${result.line},"ok":true,"item":${serializeItem(result.item)}}`
    : `{"input":${result.line},"ok":false,"petId":${result.petId},"quantity":${result.quantity},"error":${JSON.stringify(result.error.body)}}`;
}

export function skippedJson(problem: BulkProblem): string {
  return JSON.stringify({
    input: problem.line,
    ok: false,
    skipped: true,
    error: { code: 'bad_input', message: problem.message, status: null },
  });
}

/** An entry a run that stopped early never sent. */
function notSentJson(entry: BulkEntry): string {
  return `{"input":${entry.line},"ok":false,"notSent":true,"petId":${entry.petId},"quantity":${entry.quantity}}`;
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
) {
  const { stop, failed } = outcome;
  const outputOpen = stop?.reason !== 'output closed';
  if (outputOpen && (context.json || flags.ndjson)) {
    const unsent = Array.from(notSentEntries(input, outcome), notSentJson);
    if (context.json)
      context.stdout.write(
        `[${[...input.problems.map(skippedJson), ...(outcome.results ?? []).map(resultJson), ...unsent].join(',')}]\n`,
      );
    else if (unsent.length > 0) context.stdout.write(`${unsent.join('\n')}\n`);
  }
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
