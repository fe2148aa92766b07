import type { InventoryClient } from '../client/client';
import { writeOnWhatItHolds } from '../client/write-outcome';
import type { CommandContext, StopSignal } from '../output/context';
import { createProgress } from '../output/progress';
import type { BulkEntry, BulkInput, EntryStore } from './entries';
import type { PipelineOptions } from './options';
import { resultJson, resultRow } from './results';
import { type BulkOutcome, type BulkResult, runBulk } from './run';

export type ApplyOptions = Pick<PipelineOptions, 'concurrency' | 'ndjson' | 'rows'> & {
  /**
   * Asked just before each update is sent: undefined holds it back (a conflict found at that moment);
   * `ifQuantity` is what the pet must still hold when a petinv serve writes it (Petinv-If-Quantity).
   */
  check: (entry: BulkEntry) => Promise<{ ifQuantity?: number } | undefined>;
  /**
   * Told that serve found the pet holding `current` instead: the quantity to write on it now, or undefined
   * when it is already right or a conflict, held back (the caller reports it).
   */
  changedMeanwhile: (entry: BulkEntry, current: number) => Promise<number | undefined>;
  /** Told each result as it completes, before it is printed (the history keeps what was written). */
  onResult: (result: BulkResult) => void;
  /**
   * At a quit (see applyBulk) this is awaited first, to record and say what was written so far.
   * `unanswered` are the updates handed over and never answered, in input order: each may have been applied;
   * `unsent` counts the entries never handed over.
   */
  onQuit: (signal: StopSignal, unanswered: readonly BulkEntry[], unsent: number) => Promise<void>;
  /** Awaited once every update is answered, to record and report the run: a signal meanwhile is let pass. */
  onEnd: (outcome: BulkOutcome, seconds: number) => Promise<void>;
};

/**
 * Sends the plan's updates, reporting each result as it completes, under a progress bar on a terminal.
 * The first Ctrl-C stops sending and lets those in flight finish; a second one, SIGTERM or SIGHUP ends
 * petinv at once, once onQuit has recorded what was written.
 */
export async function applyBulk(
  input: { entries: EntryStore; unit: BulkInput['unit'] },
  client: InventoryClient,
  options: ApplyOptions,
  context: CommandContext,
): Promise<void> {
  const { ndjson, rows, concurrency } = options;
  // Results streamed to stdout (and rows on a terminal) leave no room for a bar.
  const streamed = context.json || ndjson || rows !== undefined;
  const progress = createProgress(streamed ? 0 : input.entries.length, context.stderr);
  const interrupt = new AbortController();
  // The updates handed over and not yet answered: at a quit, each may have been applied.
  const inFlight = new Set<BulkEntry>();
  let handedOver = 0;
  let quitting = false;
  let interrupted = false;
  let ended = false;
  /** Every listener of the run's signals: one per signal for the whole run (see onSigint). */
  const stopListening = () => {
    context.signals.off('SIGINT', onSigint);
    context.signals.off('SIGTERM', onQuit);
    context.signals.off('SIGHUP', onQuit);
  };
  const onQuit = (signal: NodeJS.Signals) => {
    if (ended) return;
    stopListening();
    if (quitting) return;
    quitting = true;
    interrupt.abort();
    progress.finish();
    const quit = () => context.quit?.(signal as StopSignal);
    const unanswered = [...inFlight].sort((a, b) => a.line - b.line);
    options.onQuit(signal as StopSignal, unanswered, input.entries.length - handedOver).then(quit, quit);
  };
  // One SIGINT listener for both presses, never swapped: a second Ctrl-C between a `once` listener's removal
  // and the next one's registration met Node's default action, and ended petinv unrecorded.
  const onSigint = (signal: NodeJS.Signals) => {
    if (ended) return;
    if (interrupted) return onQuit(signal);
    interrupted = true;
    interrupt.abort();
    const waiting = inFlight.size > 0 ? `, waiting for the ${inFlight.size} in flight` : '';
    if (!context.json)
      progress.print(`petinv: interrupted: sending no more updates${waiting} (Ctrl-C again quits at once)\n`);
  };
  context.signals.on('SIGINT', onSigint);
  context.signals.on('SIGTERM', onQuit);
  context.signals.on('SIGHUP', onQuit);
  const started = performance.now();
  try {
    const outcome = await runBulk(input.entries, {
      concurrency,
      update: async (entry: BulkEntry) => {
        handedOver++;
        const send = await options.check(entry);
        if (!send) return undefined;
        inFlight.add(entry);
        try {
          const changed = (current: number) => options.changedMeanwhile(entry, current);
          return await writeOnWhatItHolds(client, entry.petId, entry.quantity, send.ifQuantity, changed);
        } finally {
          inFlight.delete(entry);
        }
      },
      onResult: (result) => {
        // Quitting, the bar is cleared for the last words: answers still coming in do not draw it again.
        if (!quitting) progress.advance(result.ok);
        options.onResult(result);
        if (ndjson) context.stdout.write(`${resultJson(result)}\n`);
        else {
          const text = rows?.rows([resultRow(result)]) ?? '';
          if (text !== '') context.stdout.write(text);
          if (!result.ok && !context.json)
            progress.print(`petinv: ${input.unit} ${result.line}: ${result.error.message}\n`);
        }
      },
      outputClosed: context.outputClosed,
      interrupted: interrupt.signal,
      keepResults: context.json,
    });
    // The run is over: quitting now would lose only its record and its summary.
    ended = true;
    progress.finish();
    await options.onEnd(outcome, (performance.now() - started) / 1000);
  } finally {
    if (!ended) progress.finish();
    stopListening();
  }
}
