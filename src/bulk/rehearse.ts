import { PetinvError } from '../errors';
import type { CommandContext } from '../output/context';
import { type PlannedChange, writePlan } from '../output/plan';
import { plural } from '../output/plural';
import type { BulkEntry, BulkInput } from './input';
import type { PipelineOptions } from './options';
import type { SheetPlan } from './plan';
import { conflictError, conflictMessage, conflictResult, skippedResult } from './results';

/** --dry-run: the plan against current stock, as a plan file when -o asks; nothing is written. */
export function rehearse(
  input: BulkInput,
  plan: SheetPlan,
  options: PipelineOptions,
  context: CommandContext,
  envName: string,
  /** The service is a petinv serve (it said its store): its rules are known, and a row it would refuse is failed here. */
  serve: boolean,
) {
  const steps: PlannedChange[] = [];
  let refused = 0;
  for (let index = 0; index < plan.send.length; index++) {
    const entry = plan.send.at(index) as BulkEntry;
    if (serve && entry.quantity < 0) {
      refused++;
      if (!context.json)
        context.stderr.write(
          `petinv: ${input.unit} ${entry.line}: pet ${entry.petId}: ${envName} (a petinv serve) refuses a negative quantity (${entry.quantity}): the run would fail this row\n`,
        );
    } else
      steps.push({ petId: entry.petId, to: entry.quantity, before: plan.before[index], from: entry.from });
  }
  // A conflict is no step of the plan (it would not be sent): it is said on stderr, a line each, or with
  // --json beside the error on its one line (a rehearsal with any fails).
  if (!context.json)
    for (const conflict of plan.conflicts)
      context.stderr.write(`petinv: ${input.unit} ${conflict.line}: ${conflictMessage(conflict, envName)}\n`);
  // The real run would end in exit 9, its skipped input reported and each unknown pet's update failing
  // with 404, or in exit 11 for its conflicts: so must its rehearsal, or `--dry-run && set` goes ahead.
  const skipped = input.problems.length;
  const { unknown, conflicts } = plan;
  const problems = [
    refused > 0 && `${plural(refused, 'update')} would be refused (a negative quantity)`,
    unknown > 0 && `${plural(unknown, 'pet')} ${unknown === 1 ? 'is' : 'are'} not in the inventory`,
    skipped > 0 && `${plural(skipped, input.unit)} ${skipped === 1 ? 'was' : 'were'} skipped`,
  ].filter(Boolean);
  // Exit 9 outranks the conflicts' 11: the last line still counts them.
  if (problems.length > 0 && conflicts.length > 0)
    problems.push(`${plural(conflicts.length, 'pet')} changed since the input was read (conflicts)`);
  // --json's message is the rehearsal's words too, not the real run's.
  const failure =
    problems.length > 0
      ? new PetinvError('partial', `dry run: ${problems.join(' and ')}; nothing was written to ${envName}`, {
          code: 'partial_failure',
        })
      : conflicts.length > 0
        ? new PetinvError(
            'conflict',
            `dry run: ${conflictError(conflicts, envName).message}; nothing was written`,
          )
        : undefined;
  // --json: the skipped lines head the one array, as in a real run (--ndjson printed them already). A
  // failing rehearsal's summary goes on its one error line.
  const summary = writePlan(
    steps,
    'bulk',
    options.output,
    context,
    envName,
    input.problems.map(skippedResult),
    { alreadyRight: plan.alreadyRight, conflicts: conflicts.length },
    { summary: !(failure && context.json) },
  );
  if (failure)
    throw failure.withJson({
      dryRun: summary,
      ...(context.json &&
        conflicts.length > 0 && {
          conflicts: conflicts.map((conflict) => conflictResult(conflict, envName)),
        }),
    });
}
