import { serializeItem } from '../api/json';
import { usageError } from '../errors';
import type { AdjustFlags } from '../program';
import { confirmChange, parseIntegerArgument, parsePetIdArgument } from './arguments';
import { connect } from './connect';
import type { CommandContext } from './context';
import { readCurrent, writePlan } from './plan';

/**
 * Reads the current quantity, then sets the sum. The service has no atomic increment, so a change
 * made by someone else between the read and the write is overwritten; the README says so.
 */
export async function runAdjust(
  petIdText: string,
  deltaText: string,
  flags: AdjustFlags,
  context: CommandContext,
) {
  const petId = parsePetIdArgument(petIdText);
  const delta = parseIntegerArgument(deltaText, 'delta');
  const { client, envName } = await connect(flags, context);
  const current = await readCurrent(client, petId, envName);
  const target = current.quantity + delta;
  if (!Number.isSafeInteger(target))
    throw usageError(`pet ${petId}: ${current.quantity} ${deltaText} is out of range`);
  if (flags.dryRun) {
    writePlan([{ petId, to: target, before: current }], 'single', false, context, envName);
    return;
  }
  await confirmChange(
    envName,
    `Change pet ${petId} from ${current.quantity} to ${target}`,
    flags.yes,
    context,
  );
  const updated = await client.updateInventory(petId, target);
  if (context.json) {
    context.stdout.write(
      `{"petId":${petId},"from":${current.quantity},"to":${updated.quantity},"item":${serializeItem(updated)}}\n`,
    );
  } else if (context.stdout.isTTY) {
    context.stdout.write(`${petId}: ${current.quantity} → ${updated.quantity}\n`);
  } else {
    // In a pipe, fields a script can cut: petId<TAB>before<TAB>after, as `list` prints its rows.
    context.stdout.write(`${petId}\t${current.quantity}\t${updated.quantity}\n`);
  }
}
