import type { InventoryClient } from '../api/client';
import type { CommandContext } from '../commands/context';
import { createProgress } from '../output/progress';
import type { SetFlags } from '../program';
import type { BulkEntry, BulkInput } from './input';
import { resultJson } from './report';
import { type BulkOutcome, runBulk } from './run';

export interface AppliedBulk {
  outcome: BulkOutcome;
  seconds: number;
}

/**
 * Sends every update of the plan, `concurrency` at a time, reporting each result as it completes (an
 * --ndjson line, or a failure on stderr) under a progress bar on a terminal. The first Ctrl-C stops
 * sending and lets the updates in flight finish; a second one ends petinv at once, as Ctrl-C does.
 */
export async function applyBulk(
  input: BulkInput,
  client: InventoryClient,
  flags: SetFlags,
  concurrency: number,
  context: CommandContext,
): Promise<AppliedBulk> {
  const streamed = context.json || flags.ndjson;
  const progress = createProgress(streamed ? 0 : input.entries.length, context.stderr);
  const interrupt = new AbortController();
  let inFlight = 0;
  const onInterrupt = () => {
    interrupt.abort();
    const waiting = inFlight > 0 ? `, waiting for the ${inFlight} in flight` : '';
    if (!context.json)
      progress.print(`petinv: interrupted: sending no more updates${waiting} (Ctrl-C again quits at once)\n`);
  };
  context.signals.once('SIGINT', onInterrupt);
  const started = performance.now();
  try {
    const outcome = await runBulk(input.entries, {
      concurrency,
      update: async (entry: BulkEntry) => {
        inFlight++;
        try {
          return await client.updateInventory(entry.petId, entry.quantity);
        } finally {
          inFlight--;
        }
      },
      onResult: (result) => {
        progress.advance(result.ok);
        if (flags.ndjson) context.stdout.write(`${resultJson(result)}\n`);
        else if (!result.ok && !context.json)
          progress.print(`petinv: ${input.unit} ${result.line}: ${result.error.message}\n`);
      },
      outputClosed: context.outputClosed,
      interrupted: interrupt.signal,
      keepResults: context.json,
    });
    return { outcome, seconds: (performance.now() - started) / 1000 };
  } finally {
    progress.finish();
    context.signals.off('SIGINT', onInterrupt);
  }
}
