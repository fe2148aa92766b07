import { writeQuitNotice } from '../bulk/plan';
import { quantityLeftBy, writeOnWhatItHolds } from '../client/write-outcome';
import { stateDirectory } from '../config/paths';
import type { InventoryItem } from '../contract/schemas';
import { terminalSession } from '../history/session';
import { type History, type HistoryRun, openHistory } from '../history/store';
import type { CommandContext, StopSignal } from '../output/context';
import { type Connection, writeWarning } from './connect';

/**
 * The history of write runs for the service at `baseUrl`, or of the store it said it serves (`storeId`):
 * what goes wrong with it is a warning on stderr (a JSON line with --json), never the command's failure.
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

/**
 * Sets one pet's quantity and records the run when it changed the pet, or may have (what it may have left,
 * for undo), then fails as it would have. `before` (null: not in the inventory; undefined: not known) is
 * the write's condition (writeOnWhatItHolds): changed since, the pet's new quantity becomes `before`. A
 * known before is in the history ahead of the write (History.begin): a petinv killed meanwhile leaves it.
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
  const history = historyFor(baseUrl, context, client.storeId ?? null);
  const planned = before === undefined || before === to ? [] : [{ petId, before, after: to }];
  const begun = before === undefined ? undefined : history.begin({ env: where, command, changes: planned });
  // `failed`: the update may have been applied, or was answered with another quantity (as a bulk run marks it).
  let recorded: Promise<unknown> | undefined;
  const record = (after: number | undefined, marks: HistoryRun['marks'] = []) => {
    const changes =
      before !== undefined && after !== undefined && after !== before ? [{ petId, before, after }] : [];
    recorded ??= begun
      ? begun.then((journal) => journal.finish({ changes, marks }))
      : history.record({ env: where, command, changes, marks });
    return recorded;
  };
  // Stopped once its start is being recorded, the run ends as what it may have done, not unfinished for ever.
  // Its listeners go first: a second signal, or the one quit re-raises, has its default action.
  const stop = (signal: NodeJS.Signals) => {
    for (const name of signals) context.signals.off(name, stop);
    const message = `${signal}: pet ${petId}'s update may have been applied or not; it is in the history, so petinv undo takes it back if it was`;
    writeQuitNotice(message, context);
    const quit = () => context.quit?.(signal as StopSignal);
    record(to, ['interrupted', 'failed']).then(quit, quit);
  };
  const signals = begun ? (['SIGINT', 'SIGTERM', 'SIGHUP'] as const) : [];
  for (const signal of signals) context.signals.on(signal, stop);
  const writeOn = async (current: number) => {
    before = current;
    to = changed(current);
    await (await begun)?.amend([{ petId, before, after: to }]);
    return to;
  };
  let item: InventoryItem;
  try {
    await begun;
    // Never undefined: writeOn always gives a quantity.
    item = (await writeOnWhatItHolds(client, petId, to, before ?? undefined, writeOn)) as InventoryItem;
  } catch (error) {
    const left = quantityLeftBy(error, to);
    await record(left, left === undefined ? [] : ['failed']);
    throw error;
  } finally {
    for (const signal of signals) context.signals.off(signal, stop);
  }
  await record(item.quantity);
  return { item, before };
}
