import type { InventoryClient } from '../api/client';
import type { InventoryItem } from '../api/schemas';
import { PetinvError } from '../errors';
import { plural } from '../output/plural';
import type { CommandContext } from './context';

/** One change a dry run would make: the quantity it would set, against the stock it read. */
export interface PlannedChange {
  petId: bigint;
  to: number;
  /** The current item, or undefined when the pet is not in the inventory. */
  before: InventoryItem | undefined;
}

/** The JSON form of a planned change, the same for `set`, `adjust` and bulk dry runs. */
export function planJson({ petId, to, before }: PlannedChange): string {
  return `{"petId":${petId},"from":${before?.quantity ?? null},"to":${to},"found":${before !== undefined}}`;
}

function planLine({ petId, to, before }: PlannedChange, envName: string): string {
  if (!before) return `${petId}: not in the inventory of ${envName}\n`;
  return `${petId}: ${before.quantity} → ${to}${before.quantity === to ? ' (unchanged)' : ''}\n`;
}

/**
 * Prints a dry run: a line per change (`42: 7 → 9`), or JSON with --json (one array for bulk input, one
 * object for a single pet), or NDJSON; then one line on stderr saying that nothing was written.
 */
export function writePlan(
  plan: readonly PlannedChange[],
  form: 'single' | 'bulk',
  ndjson: boolean,
  context: CommandContext,
  envName: string,
  /** Results for skipped input lines, as JSON: with --json they head the array. */
  skipped: readonly string[] = [],
) {
  if (context.json)
    context.stdout.write(
      form === 'single' && plan.length === 1
        ? `${planJson(plan[0] as PlannedChange)}\n`
        : `[${[...skipped, ...plan.map(planJson)].join(',')}]\n`,
    );
  else if (ndjson) context.stdout.write(plan.map((step) => `${planJson(step)}\n`).join(''));
  else context.stdout.write(plan.map((step) => planLine(step, envName)).join(''));
  const missing = plan.filter((step) => !step.before).length;
  const changes = plan.length - missing;
  // With --json, stderr carries JSON lines only, as the summary of a real run does.
  if (context.json) {
    context.stderr.write(`${JSON.stringify({ dryRun: { changes, unknown: missing, written: 0 } })}\n`);
    return;
  }
  const unknown = form === 'bulk' ? `, ${plural(missing, 'unknown pet')}` : '';
  context.stderr.write(
    `petinv: dry run: ${plural(changes, 'change')} against ${envName}${unknown}; nothing was written\n`,
  );
}

/** The current item of one pet, read from the inventory; a pet that is not there is a 404 as a write would be. */
export async function readCurrent(
  client: InventoryClient,
  petId: bigint,
  envName: string,
): Promise<InventoryItem> {
  const current = (await client.listInventory()).find((item) => item.petId === petId);
  if (current) return current;
  throw new PetinvError('notFound', `pet ${petId} not found in ${envName} (it is not in the inventory)`, {
    code: 'pet_not_found',
    status: 404,
  });
}
