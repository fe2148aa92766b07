import { quantityLeftBy } from '../client/write-outcome';
import { stateDirectory } from '../config/paths';
import type { InventoryItem } from '../contract/schemas';
import { QuantityChangedError } from '../errors';
import { terminalSession } from '../history/session';
import { type History, openHistory } from '../history/store';
import type { CommandContext } from '../output/context';
import { type Connection, writeWarning } from './connect';

/**
 * The history of write runs for the service at `baseUrl`, or of the store it said it serves (`storeId`,
 * see src/history/store.ts). What goes wrong with it is a warning on stderr (a JSON line with --json),
 * never the command's failure.
 */
export function historyFor(baseUrl: string, context: CommandContext, storeId?: string | null): History {
  return openHistory({
    directory: stateDirectory(context.env),
    baseUrl,
    storeId,
    session: terminalSession(),
    warn: (message) => writeWarning(context, message),
  });
}

/** Tries of a write whose pet a petinv serve found changed since its read, each on the new quantity. */
const TRIES = 3;

/**
 * Sets one pet's quantity and records the run when it changed the pet, or may have (with what it may have
 * left, for undo), then fails as it would have. `before` null: not in the inventory; undefined: not known.
 * A known `before` is a condition a petinv serve checks (Petinv-If-Quantity): when the pet changed since,
 * the write is made again on what it holds now, which becomes `before`, and `changed` says what to write.
 */
export async function writeRecorded(
  { client, baseUrl, where }: Connection,
  context: CommandContext,
  command: string,
  change: { petId: bigint; before: number | null | undefined; to: number },
  changed: (current: number) => number = () => change.to,
): Promise<{ item: InventoryItem; before: number | null | undefined }> {
  const { petId } = change;
  let { before, to } = change;
  const record = async (after: number) => {
    if (before !== undefined && after !== before)
      await historyFor(baseUrl, context, client.storeId ?? null).record({
        env: where,
        command,
        changes: [{ petId, before, after }],
      });
  };
  for (let tries = 1; ; tries++) {
    try {
      const item = await client.updateInventory(petId, to, before ?? undefined);
      await record(item.quantity);
      return { item, before };
    } catch (error) {
      if (error instanceof QuantityChangedError && tries < TRIES) {
        before = error.current;
        to = changed(before);
        continue;
      }
      const left = quantityLeftBy(error, to);
      if (left !== undefined) await record(left);
      throw error;
    }
  }
}
