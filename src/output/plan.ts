import { stringifyJson } from '../contract/json';
import type { InventoryItem } from '../contract/schemas';
import type { OutputChoice } from './choose';
import type { CommandContext } from './context';
import { type Column, exportRows, jsonDocument } from './exporter';
import { plural } from './plural';
import { needsTsvHeading } from './read-back';

/** One change a dry run would make: the quantity it would set, against the stock it read. */
export interface PlannedChange {
  petId: bigint;
  to: number;
  /** The current item, or undefined when the pet is not in the inventory. */
  before: InventoryItem | undefined;
  /** The input's own from (a count sheet's expected): the plan carries it, not the quantity read now. */
  from?: number;
}

const fromOf = (step: PlannedChange) => step.from ?? step.before?.quantity ?? null;

/** A planned change as a row, and in JSON `{"petId","from","to","found"}`, the same for set, adjust and bulk. */
export const PLAN_COLUMNS: readonly Column<PlannedChange>[] = [
  { key: 'petId', heading: 'PET ID', value: (step) => step.petId, align: 'right' },
  { key: 'from', heading: 'BEFORE', value: fromOf, align: 'right' },
  { key: 'to', heading: 'AFTER', value: (step) => step.to, align: 'right' },
  { key: 'found', heading: 'FOUND', value: (step) => step.before !== undefined },
];

const planValue = (step: PlannedChange) =>
  Object.fromEntries(PLAN_COLUMNS.map((column) => [column.key, column.value(step)]));

function planLine(step: PlannedChange, envName: string): string {
  const { petId, to, before } = step;
  if (!before) return `${petId}: not in the inventory of ${envName}\n`;
  const held = before.quantity === fromOf(step) ? '' : ` (holds ${before.quantity} now)`;
  return `${petId}: ${fromOf(step)} → ${to}${before.quantity === to ? ' (unchanged)' : held}\n`;
}

/** Prints a dry run: a line per change (`42: 7 → 9`) or the format asked for, then "nothing was written". */
export function writePlan(
  plan: readonly PlannedChange[],
  form: 'single' | 'bulk',
  output: OutputChoice,
  context: CommandContext,
  envName: string,
  /** Results for skipped input lines: with JSON they head the array. */
  skipped: readonly object[] = [],
  /** A bulk plan's rows that need nothing, and its conflicts (not steps: they would not be sent). */
  counts?: { alreadyRight: number; conflicts: number },
  /** Whether to write the summary on stderr: a failing --json rehearsal puts it on its error line. */
  { summary = true } = {},
) {
  const { stdout } = context;
  if (output.format === 'json')
    stdout.write(
      jsonDocument(
        form === 'single' && plan.length === 1
          ? planValue(plan[0] as PlannedChange)
          : [...skipped, ...plan.map(planValue)],
        output,
      ),
    );
  else if (output.format === 'ndjson')
    stdout.write(plan.map((step) => `${stringifyJson(planValue(step))}\n`).join(''));
  else if (output.explicit)
    stdout.write(exportRows(PLAN_COLUMNS, { ...output, tsvHeading: needsTsvHeading(output.fields) }, plan));
  else stdout.write(plan.map((step) => planLine(step, envName)).join(''));
  const missing = plan.filter((step) => !step.before).length;
  // A step to the quantity the pet already holds (`set 5 1` when it holds 1, bulk rows with --all) changes nothing.
  const changes = plan.filter((step) => step.before && step.before.quantity !== step.to).length;
  const written = { changes, unknown: missing, ...counts, written: 0 };
  if (!summary) return written;
  // With --json, stderr carries JSON lines only, as the summary of a real run does.
  if (context.json) {
    context.stderr.write(`${stringifyJson({ dryRun: written })}\n`);
    return written;
  }
  const unknown = form === 'bulk' ? `, ${plural(missing, 'unknown pet')}` : '';
  const more = counts
    ? `, ${counts.alreadyRight} already right, ${plural(counts.conflicts, 'conflict')}`
    : '';
  context.stderr.write(
    `petinv: dry run: ${plural(changes, 'change')} against ${envName}${unknown}${more}; nothing was written\n`,
  );
  return written;
}
