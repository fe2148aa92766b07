import { setTimeout as delay } from 'node:timers/promises';
import { type InventoryClient, retryDelayMs } from '../client/client';
import { stringifyJson } from '../contract/json';
import type { InventoryItem } from '../contract/schemas';
import { PetinvError } from '../errors';
import type { CommandContext, StopSignal } from '../output/context';
import { printable } from '../printable';
import {
  changeJson,
  changesBetween,
  type InventoryChange,
  type InventoryIndex,
  indexInventory,
} from '../watch/changes';
import { ENTER_SCREEN, LEAVE_SCREEN, renderWatchScreen, type WatchScreenState } from '../watch/screen';

export interface WatchOptions {
  client: InventoryClient;
  envName: string;
  /** The list's filters, sort and limit: what is shown, and which pets' changes are told. */
  view: (items: InventoryItem[]) => InventoryItem[];
  intervalMs: number;
  /** A redrawn table (a terminal), or one JSON line per change. */
  mode: 'screen' | 'events';
  /** Events only: the current state first, as one event per pet with `from: null`. */
  initial: boolean;
}

/** Failures a later poll may not meet: unreachable, a timeout, an answer cut off, busy (408, 429), a 5xx. */
function isTransient(error: unknown): error is PetinvError {
  if (!(error instanceof PetinvError)) return false;
  if (error.kind === 'network') return error.body.code !== 'tls';
  const { code, status } = error.body;
  if (error.kind !== 'server') return false;
  if (code === 'timeout' || code === 'broken_response') return true;
  return status !== null && (status >= 500 || status === 408 || status === 429);
}

/**
 * What ends a watch: Ctrl-C, SIGTERM or a closed stdout. `pause` waits between polls, ended at once by a
 * stop and leaving no timer to hold the process; `release` lets go of the signals.
 */
function watchStop(context: CommandContext) {
  const stopping = new AbortController();
  const stop = () => stopping.abort();
  const signals: StopSignal[] = ['SIGINT', 'SIGTERM'];
  for (const signal of signals) context.signals.on(signal, stop);
  context.outputClosed?.addEventListener('abort', stop);
  const stopped = new Promise<void>((resolve) => stopping.signal.addEventListener('abort', () => resolve()));
  // A stop clears the timer, and the rejection it makes only ends the pause.
  const pause = (ms: number) => delay(ms, undefined, { signal: stopping.signal }).catch(() => {});
  const release = () => {
    for (const signal of signals) context.signals.off(signal, stop);
    context.outputClosed?.removeEventListener('abort', stop);
  };
  return { signal: stopping.signal, stopped, pause, release };
}

/** The redrawn table: its marks of recent changes, and the drawing. */
function watchScreen(state: WatchScreenState, context: CommandContext) {
  const { stdout } = context;
  // A change stays marked this long, so one made between two glances is not missed (the header says when).
  const markMs = Math.max(10_000, 5 * state.intervalMs);
  const marks = new Map<bigint, { change: InventoryChange; at: number }>();
  const draw = () =>
    stdout.write(
      renderWatchScreen(state, {
        color: context.color,
        columns: stdout.columns ?? 80,
        rows: (stdout as { rows?: number }).rows ?? 24,
      }),
    );
  return {
    draw,
    mark(changes: readonly InventoryChange[], at: Date) {
      for (const change of changes) marks.set(change.petId, { change, at: at.getTime() });
      state.changedAt = at;
    },
    redraw(at: Date) {
      for (const [petId, mark] of marks) if (at.getTime() - mark.at > markMs) marks.delete(petId);
      state.marks = new Map([...marks].map(([petId, mark]) => [petId, mark.change]));
      draw();
    },
  };
}

type Known = { index: InventoryIndex; view: InventoryItem[] };

/** The changes a changed list brings: against what was known, or with --initial, the first state itself. */
function changesOf(known: Known | undefined, next: Known, options: WatchOptions): InventoryChange[] {
  if (known) return changesBetween(known.index, next.index, known.view, next.view);
  if (options.mode === 'events' && options.initial)
    return next.view.map(({ petId, quantity, status }) => ({ petId, from: null, to: quantity, status }));
  return [];
}

/**
 * `petinv list --watch`: polls with conditional requests and shows what changed, a table redrawn in place
 * or a JSON line per change. A poll failing past the client's retries is retried on the same backoff (the
 * lost connection and its return told once); another failure ends the watch with its exit code, Ctrl-C
 * with 0, the terminal as it was.
 */
export async function watchInventory(options: WatchOptions, context: CommandContext): Promise<void> {
  const { client, envName, view, intervalMs, mode } = options;
  const { stdout, stderr } = context;
  const stop = watchStop(context);
  // On a terminal the header says it; a stderr elsewhere (a log file) gets the line.
  const tellStderr = mode === 'events' || stderr.isTTY !== true;
  // With --json, stderr holds JSON lines only, as for every command.
  const tell = (kind: 'notice' | 'warning', message: string) =>
    stderr.write(context.json ? `${stringifyJson({ [kind]: { message } })}\n` : `petinv: ${message}\n`);
  const state: WatchScreenState = { view: [], marks: new Map(), envName, intervalMs };
  const screen = watchScreen(state, context);

  let etag: string | undefined;
  let known: Known | undefined;
  let failures = 0;
  if (mode === 'screen') {
    // The first answer may take a while (a large list, a slow service): the frame says what it waits for.
    stdout.write(ENTER_SCREEN);
    screen.draw();
  } else if (stderr.isTTY === true)
    tell(
      'notice',
      `watching ${envName} every ${intervalMs / 1000}s, waiting for the first answer; then a JSON line per change`,
    );
  try {
    while (!stop.signal.aborted) {
      let poll: Awaited<ReturnType<InventoryClient['pollInventory']>> | undefined;
      try {
        poll = await Promise.race([client.pollInventory(etag), stop.stopped.then(() => undefined)]);
      } catch (error) {
        if (!isTransient(error)) throw error;
        failures++;
        const lost = `lost the connection to ${envName}: ${printable(error.message, 300)}; still trying`;
        if (state.lost === undefined && tellStderr) tell('warning', lost);
        state.lost = printable(error.body.message, 120);
        if (mode === 'screen') screen.draw();
        await stop.pause(Math.max(intervalMs, retryDelayMs(failures, null, Math.random).ms));
        continue;
      }
      if (poll === undefined) break;
      if (state.lost !== undefined) {
        if (tellStderr) tell('notice', `the connection to ${envName} is back`);
        state.lost = undefined;
      }
      failures = 0;
      const at = new Date();
      state.checkedAt = at;
      if (poll.changed) {
        etag = poll.etag;
        const next = { index: indexInventory(poll.items), view: view(poll.items) };
        const changes = changesOf(known, next, options);
        const first = known === undefined;
        known = next;
        state.view = next.view;
        if (mode === 'events') {
          if (changes.length > 0) stdout.write(changes.map((change) => changeJson(change, at)).join(''));
        } else if (!first && changes.length > 0) screen.mark(changes, at);
      }
      if (mode === 'screen') screen.redraw(at);
      await stop.pause(intervalMs);
    }
  } finally {
    if (mode === 'screen' && !stdout.destroyed) stdout.write(LEAVE_SCREEN);
    stop.release();
  }
}
