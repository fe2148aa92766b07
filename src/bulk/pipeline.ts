import type { InventoryClient } from '../client/client';
import { maybeApplied, quantityLeftBy, refusesTheRequestItself } from '../client/write-outcome';
import { stringifyJson } from '../contract/json';
import type { InventoryItem } from '../contract/schemas';
import type { History, HistoryChange, HistoryRun } from '../history/store';
import type { CommandContext } from '../output/context';
import { plural } from '../output/plural';
import { applyBulk } from './apply';
import { FreshInventory } from './fresh';
import type { BulkEntry, BulkInput } from './input';
import type { PipelineOptions } from './options';
import {
  changedSinceRead,
  changedToWantedNotice,
  decideRow,
  planNotices,
  planSheet,
  readSheet,
  type SheetPlan,
  type SheetSource,
  writeNotice,
  writeQuitNotice,
} from './plan';
import { rehearse } from './rehearse';
import { type FinishedRun, reportBulk } from './report';
import { byPetId, type Conflict, conflictMessage, conflictResult, conflictRow, namedFirst } from './results';

export interface PipelineTarget {
  client: InventoryClient;
  envName: string;
  /** The list as the command read it already (undo), and when that read was sent. */
  first?: { items: readonly InventoryItem[]; sentAt: number };
}

/** Reads the sheet, then runs it: `connect` is called only once the sheet was read and found good. */
export async function runSheet(
  source: SheetSource,
  connect: () => Promise<PipelineTarget & { history?: () => History }>,
  options: Omit<PipelineOptions, 'history'>,
  context: CommandContext,
): Promise<void> {
  const input = await readSheet(source, context);
  const target = await connect();
  await runPipeline(input, target, { ...options, history: target.history }, context);
}

/** Plans `input` against one read of the current inventory, confirms, applies, records and reports: or rehearses. */
export async function runPipeline(
  input: BulkInput,
  target: PipelineTarget,
  options: PipelineOptions,
  context: CommandContext,
): Promise<void> {
  const { client, envName } = target;
  // One read of the list for the plan (a 304 where the list cache allows); fresh.ts says when it is read again.
  const sentAt = performance.now();
  const first = target.first ?? { items: await client.listInventory(), sentAt };
  const inventory = new FreshInventory(client, first);
  const history = options.history?.();
  // A pet an earlier run of this input left as it is now is no one else's change (a sheet applied again).
  const leftBefore = options.undo ? undefined : leftByEarlierRuns(history?.read() ?? [], options.command);
  const planOptions = { ...options, leftBefore };
  const plan = planSheet(input.entries, inventory.first, planOptions);
  for (const notice of planNotices(plan, envName)) writeNotice(notice, context);
  if (options.dryRun)
    return void rehearse(input, plan, options, context, envName, client.storeId !== undefined);
  writeConflicts(plan.conflicts, input.unit, options, context, envName);
  if (plan.send.length > 0) await options.confirm(options.question(plan.send.length));

  // What each pet held when its update was sent (the history's before), kept until its answer.
  const befores = new Map<bigint, number | null>();
  // The plan is in the history before the first write, so that a petinv killed outright leaves what it
  // may have written for undo; a pet found holding other than planned is recorded again before its write.
  const planned = inventory.first;
  const journal = await history?.begin({
    env: envName,
    command: options.command,
    changes: plannedChanges(plan),
  });
  // `after` alike `before`: the pet is not written after all (already right, or a conflict).
  const replan = (petId: bigint, before: number | null, after: number) =>
    journal?.amend([{ petId, before, after }]);
  const changes: HistoryChange[] = [];
  // Updates whose outcome is unknown, or answered with another quantity: in the history too, with what
  // they may have left (an undo of one not applied finds it already right), but not counted as changed.
  const maybeChanges: HistoryChange[] = [];
  const failedRows: FinishedRun['failedRows'] = { refused: [], maybeApplied: [] };
  const forcedOver = new Set<bigint>();
  // Written over a change since the read: one from its from (--force), or without one from what was read.
  const noteWrittenOver = (entry: BulkEntry, current: number | null) =>
    current !== null &&
    current !== (entry.from ?? planned.get(entry.petId)?.quantity) &&
    forcedOver.add(entry.petId);
  const alreadyRight = (entry: BulkEntry, current: number | undefined) => {
    plan.alreadyRight++;
    if (changedSinceRead(entry, current, planOptions)) writeNotice(changedToWantedNotice([entry]), context);
  };
  const check = async (entry: BulkEntry) => {
    const item = (await inventory.current()).get(entry.petId);
    const decision = decideRow(entry, item, options);
    if (decision === 'alreadyRight') alreadyRight(entry, item?.quantity);
    if (typeof decision === 'object') {
      plan.conflicts.push(decision);
      writeConflicts([decision], input.unit, options, context, envName);
    }
    const current = item?.quantity ?? null;
    const held = decision === 'alreadyRight' || typeof decision === 'object';
    if (current !== (planned.get(entry.petId)?.quantity ?? null))
      await replan(entry.petId, current, held ? (current as number) : entry.quantity);
    if (held) return undefined;
    noteWrittenOver(entry, current);
    befores.set(entry.petId, current);
    // serve writes it only if the pet still holds what was read: a change made since is never overwritten
    // unseen. --force writes over it on the quantity serve names, which becomes its before (changedMeanwhile).
    return { ifQuantity: item?.quantity };
  };
  // Decided as at the read (decideRow): already right, a conflict for a row with a from (unless --force),
  // or sent again on the quantity serve found, which becomes its before: an undo gives the colleague's back.
  const changedMeanwhile = async (entry: BulkEntry, current: number) => {
    if (current === entry.quantity && !options.all) {
      alreadyRight(entry, current);
      befores.delete(entry.petId);
      await replan(entry.petId, current, current);
      return undefined;
    }
    if (entry.from === undefined || options.force || current === entry.quantity) {
      noteWrittenOver(entry, current);
      befores.set(entry.petId, current);
      await replan(entry.petId, current, entry.quantity);
      return entry.quantity;
    }
    befores.delete(entry.petId);
    await replan(entry.petId, current, current);
    const { line, petId, from, quantity: wanted } = entry;
    const conflict = { line, petId, from, current, wanted };
    plan.conflicts.push(conflict);
    writeConflicts([conflict], input.unit, options, context, envName);
    return undefined;
  };
  const beforeOf = (petId: bigint) => befores.get(petId) ?? null;
  // Once: at the run's end, or when a second Ctrl-C, SIGTERM or SIGHUP quits before it.
  let recording: Promise<HistoryRun | undefined> | undefined;
  const record = (stopped: boolean) => {
    const failed = failedRows.refused.length + failedRows.maybeApplied.length + maybeChanges.length > 0;
    const marks = [stopped && 'interrupted', options.force && 'forced', failed && 'failed'] as const;
    recording ??=
      journal?.finish({
        changes: [...changes, ...maybeChanges],
        marks: marks.filter((mark) => mark !== false),
      }) ?? Promise.resolve(undefined);
    return recording;
  };
  await applyBulk(
    { entries: plan.send, unit: input.unit },
    client,
    {
      ...options,
      check,
      changedMeanwhile,
      // Recorded before the report, which ends in the run's failure when it had one: what was written is kept.
      onEnd: async (outcome, seconds) => {
        await record(outcome.stop !== undefined && outcome.notSent > 0);
        const over = changes.filter((change) => forcedOver.has(change.petId));
        if (over.length > 0)
          writeNotice(
            `${options.force ? '--force ' : ''}wrote over ${plural(over.length, 'pet')} changed since the input was read (${namedFirst(over.sort(byPetId), (change) => `pet ${change.petId} held ${change.before}`)}); the history keeps what ${over.length === 1 ? 'it' : 'they'} held, so petinv undo gives it back`,
            context,
          );
        reportBulk(
          { outcome, input, plan, changed: changes.length, failedRows, envName, seconds },
          options,
          context,
        );
      },
      onResult: (result) => {
        const before = beforeOf(result.petId);
        befores.delete(result.petId);
        if (!result.ok) {
          const row = { input: result.line, petId: result.petId };
          const asSent = refusesTheRequestItself(result.error.body.status ?? 0);
          // Answered with another quantity, the pet was changed: never "not applied" (counted as mismatched).
          if (result.error.kind !== 'mismatch') {
            if (maybeApplied(result.error)) failedRows.maybeApplied.push(row);
            else failedRows.refused.push({ ...row, asSent });
          }
          // Maybe applied, or answered with another quantity: kept with what it may have left.
          const left = quantityLeftBy(result.error, result.quantity);
          if (left !== undefined && before !== left)
            maybeChanges.push({ petId: result.petId, before, after: left });
          return;
        }
        if (before !== result.item.quantity)
          changes.push({ petId: result.petId, before, after: result.item.quantity });
      },
      onQuit: async (signal, unanswered, unsent) => {
        const written = changes.length;
        // Each update in flight may have been applied: kept with the quantity sent, as one of unknown outcome.
        for (const entry of unanswered) {
          const before = beforeOf(entry.petId);
          if (before !== entry.quantity)
            maybeChanges.push({ petId: entry.petId, before, after: entry.quantity });
        }
        const kept = await record(true);
        const { takenBackBy } = options;
        const them = (count: number) => (count === 1 ? 'it' : 'them');
        const what =
          written === 0
            ? 'no pet was written'
            : kept
              ? `${plural(written, 'pet')} written so far ${written === 1 ? 'is' : 'are'} in the history${takenBackBy ? ` (${takenBackBy} takes ${them(written)} back)` : ''}`
              : `${plural(written, 'pet')} ${written === 1 ? 'was' : 'were'} written so far`;
        const inFlight =
          unanswered.length === 0
            ? 'none was in flight'
            : `the ${plural(unanswered.length, 'update')} in flight may have been applied or not${kept ? ` (in the history too${takenBackBy ? `, so ${takenBackBy} takes ${them(unanswered.length)} back if applied` : ''})` : ''}`;
        const message = `quit at once (${signal}): ${what}; ${inFlight}${unsent > 0 ? `, and the rest were not sent: ${options.again}` : ''}`;
        writeQuitNotice(message, context);
      },
    },
    context,
  ).catch(async (error: unknown) => {
    await record(true);
    throw error;
  });
}

/** Each pet as the latest run of `command` left it, unless a run of another command changed it since. */
function leftByEarlierRuns(runs: readonly HistoryRun[], command: string): Map<bigint, number | null> {
  const left = new Map<bigint, number | null>();
  for (const run of runs)
    for (const { petId, after } of run.changes)
      if (run.command === command) left.set(petId, after);
      else left.delete(petId);
  return left;
}

/** What a plan would change, each pet with the quantity it held at the plan's read (null: not in the inventory). */
function plannedChanges(plan: SheetPlan): HistoryChange[] {
  const changes: HistoryChange[] = [];
  for (let index = 0; index < plan.send.length; index++) {
    const { petId, quantity } = plan.send.at(index) as BulkEntry;
    const before = plan.before[index]?.quantity ?? null;
    if (before !== quantity) changes.push({ petId, before, after: quantity });
  }
  return changes;
}

/** Each conflict: a line on stderr, or a result where results stream (--ndjson, rows); --json's array holds them at the end. */
function writeConflicts(
  conflicts: readonly Conflict[],
  unit: BulkInput['unit'],
  options: PipelineOptions,
  context: CommandContext,
  envName: string,
) {
  if (conflicts.length === 0 || context.json) return;
  if (options.ndjson) {
    for (const conflict of conflicts)
      context.stdout.write(`${stringifyJson(conflictResult(conflict, envName))}\n`);
    return;
  }
  // -o table|tsv|csv: a row each, as the results that follow; and a line each for a person on stderr.
  const text = options.rows?.rows(conflicts.map((conflict) => conflictRow(conflict, envName)));
  if (text) context.stdout.write(text);
  for (const conflict of conflicts)
    context.stderr.write(`petinv: ${unit} ${conflict.line}: ${conflictMessage(conflict, envName)}\n`);
}
