import { maybeApplied } from '../client/write-outcome';
import type { InventoryItem } from '../contract/schemas';
import { PetinvError } from '../errors';
import type { BulkEntry, EntryStore } from './entries';

export type BulkResult =
  | { line: number; petId: bigint; quantity: number; ok: true; item: InventoryItem }
  | { line: number; petId: bigint; quantity: number; ok: false; error: PetinvError };

/** Why a run stopped before its last entry (report.ts words each). */
export type BulkStop =
  | { reason: 'output closed' }
  | { reason: 'interrupted' }
  | { reason: 'refused'; error: PetinvError }
  | { reason: 'unreachable'; error: PetinvError }
  | { reason: 'failing'; error: PetinvError };

export interface BulkOutcome {
  updated: number;
  failed: number;
  /**
   * Of the failed: answered with another quantity than sent (exit 12); and sent with no answer, or answered
   * with a success that could not be taken for the item sent (maybe applied), `unbelieved` the latter.
   */
  mismatched: number;
  unknown: number;
  unbelieved: number;
  /** Entries never sent because the run stopped early: the last `notSent`, as entries go in input order. */
  notSent: number;
  stop?: BulkStop;
  /** Every result in completion order, when asked for (--json prints them at the end). */
  results?: BulkResult[];
}

/** Consecutive network failures or timeouts, each after its own retries, that end a run: the service is gone. */
export const UNREACHABLE_STREAK = 3;
/**
 * Consecutive server errors (5xx, 429, 408), each after its retries, that end a run: a service in
 * maintenance or overloaded fails every update. More than UNREACHABLE_STREAK, since a 500 can be one pet's own.
 */
export const FAILING_STREAK = 10;

export interface BulkRunOptions {
  concurrency: number;
  /** Sends the entry; undefined when a check at the moment of sending held it back (the caller reports it). */
  update: (entry: BulkEntry) => Promise<InventoryItem | undefined>;
  onResult: (result: BulkResult) => void;
  /** Aborted when nobody reads the results any more (stdout closed). */
  outputClosed?: AbortSignal;
  /** Aborted when the user asks the run to stop (Ctrl-C): nothing more is sent, those in flight finish. */
  interrupted?: AbortSignal;
  keepResults?: boolean;
}

/** Applies every entry, `concurrency` at a time, a failure recorded, not thrown; stops when going on cannot help. */
export async function runBulk(entries: EntryStore, options: BulkRunOptions): Promise<BulkOutcome> {
  const { update, onResult, outputClosed, interrupted } = options;
  const outcome: BulkOutcome = {
    updated: 0,
    failed: 0,
    mismatched: 0,
    unknown: 0,
    unbelieved: 0,
    notSent: 0,
  };
  if (options.keepResults) outcome.results = [];
  let next = 0;
  let networkStreak = 0;
  let failingStreak = 0;

  const record = (result: BulkResult) => {
    if (result.ok) {
      outcome.updated++;
      networkStreak = 0;
      failingStreak = 0;
    } else {
      outcome.failed++;
      const { kind } = result.error;
      const { code } = result.error.body;
      if (kind === 'mismatch') outcome.mismatched++;
      if (maybeApplied(result.error)) {
        outcome.unknown++;
        if (code !== 'outcome_unknown') outcome.unbelieved++;
      }
      // An answer cut off on every attempt counts as one not had, and so does no answer in time (a request
      // that never left, a host down whose connections time out): a run of them stops the run too.
      const lost =
        kind === 'network' || code === 'broken_response' || code === 'outcome_unknown' || code === 'timeout';
      networkStreak = lost ? networkStreak + 1 : 0;
      // A server error, or a refusal for the service's load or deadline (429, 408), not of the update itself.
      const status = result.error.body.status;
      const failing =
        kind === 'server' && status !== null && (status >= 500 || status === 429 || status === 408);
      failingStreak = failing ? failingStreak + 1 : 0;
      if (!outcome.stop && kind === 'auth') outcome.stop = { reason: 'refused', error: result.error };
      if (!outcome.stop && networkStreak >= UNREACHABLE_STREAK)
        outcome.stop = { reason: 'unreachable', error: result.error };
      if (!outcome.stop && failingStreak >= FAILING_STREAK)
        outcome.stop = { reason: 'failing', error: result.error };
    }
    outcome.results?.push(result);
    onResult(result);
  };

  const worker = async () => {
    while (next < entries.length) {
      if (!outcome.stop && outputClosed?.aborted) outcome.stop = { reason: 'output closed' };
      if (!outcome.stop && interrupted?.aborted) outcome.stop = { reason: 'interrupted' };
      if (outcome.stop) return;
      const entry = entries.at(next++) as BulkEntry;
      const { line, petId, quantity } = entry;
      try {
        const item = await update(entry);
        if (item) record({ line, petId, quantity, ok: true, item });
      } catch (error) {
        const failure =
          error instanceof PetinvError ? error : new PetinvError('internal', (error as Error).message);
        record({ line, petId, quantity, ok: false, error: failure });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency, entries.length) }, worker));
  outcome.notSent = entries.length - next;
  return outcome;
}
