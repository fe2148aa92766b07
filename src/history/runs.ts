import * as z from 'zod/mini';
import { describeIssues } from '../contract/issues';
import { printable } from '../printable';

/** A run as the history keeps it, one JSON line each (store.ts keeps the file). */

/** One pet a run wrote: its quantity before (null: not in the inventory then) and after. */
export type HistoryChange = { petId: bigint; before: number | null; after: number };

const HISTORY_MARKS = ['interrupted', 'forced', 'failed', 'unfinished'] as const;

const Quantity = z.number().check(z.refine(Number.isSafeInteger, 'must be an integer'));
/**
 * Text a run's line holds is shown as it is (history, undo): a line someone edited or damaged that holds
 * an escape sequence or a control character is damaged, and left out, rather than sent to a terminal.
 */
const Shown = z
  .string()
  .check(z.refine((text) => printable(text, text.length) === text, 'must be printable text'));
const HistoryLine = z.object({
  /** Its name for `petinv undo RUN`: when it ran (UTC), and four random hex digits. */
  id: z.string().check(z.regex(/^\d{8}T\d{6}-[0-9a-f]{4}$/)),
  at: z.iso.datetime(),
  env: Shown,
  /** The service's base URL. */
  service: Shown,
  /** What ran: `set`, `adjust`, `set --file counts.csv`, `undo ID`. */
  command: Shown,
  // [petId as decimal text, before, after]: compact, a run may write ten thousand pets.
  changes: z.array(z.tuple([z.string().check(z.regex(/^-?\d{1,20}$/)), z.nullable(Quantity), Quantity])),
  /** The terminal session it ran in (session.ts): a bare undo passes over other sessions' runs. */
  session: z.optional(Shown),
  /**
   * What a person should know of it: stopped before its end, --force, some updates failed; `unfinished`:
   * recorded as it began (its plan) or as it went (pets found changed since), its end not recorded yet.
   */
  marks: z.optional(z.array(z.enum(HISTORY_MARKS))),
  /** While unfinished, the petinv running it (files/lock-record.ts): undo refuses a run still running. */
  by: z.optional(
    z.object({
      // Only a process's own: signal 0 to 0 or -1 reaches a whole group, which always answers.
      pid: z.number().check(z.refine((pid) => Number.isSafeInteger(pid) && pid > 0, 'must be a process id')),
      host: Shown,
      start: z.optional(Shown),
      boot: z.optional(Shown),
    }),
  ),
});

export type HistoryRun = Omit<z.infer<typeof HistoryLine>, 'changes'> & { changes: HistoryChange[] };

/** An undo's command, `undo ID`, and the id it names: keptRuns keeps the run an unfinished undo takes back. */
export const undoCommand = (id: string) => `undo ${id}`;
const undoneBy = (command: string) => /^undo (\S+)$/.exec(command)?.[1];

export function serialize(run: HistoryRun): string {
  const changes = run.changes.map((change) => [String(change.petId), change.before, change.after]);
  return `${JSON.stringify({ ...run, changes })}\n`;
}

/**
 * The runs of a history file's text, in the order their last lines came; damaged lines told by number.
 * Lines with one id are one run (store.ts, begin): an unfinished line's changes replace the same pets',
 * a finished line the run; a run left with no changes is taken out.
 */
export function parseHistory(text: string, damaged: (line: number, why: string) => void): HistoryRun[] {
  // An unfinished run's changes by pet, once a line amends it.
  const runs = new Map<string, { run: HistoryRun; byPet?: Map<bigint, HistoryChange> }>();
  text.split('\n').forEach((line, index) => {
    if (line.trim() === '') return;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      damaged(index + 1, 'not JSON');
      return;
    }
    const parsed = HistoryLine.safeParse(raw);
    if (!parsed.success) {
      damaged(index + 1, describeIssues(parsed.error, [], 'the line'));
      return;
    }
    const { changes: tuples, ...fields } = parsed.data;
    const run = {
      ...fields,
      changes: tuples.map(([petId, before, after]) => ({ petId: BigInt(petId), before, after })),
    };
    // Two runs may share an id (a second's runs, four hex digits): a run's lines share its `at` too.
    const key = `${run.id} ${run.at}`;
    const earlier = runs.get(key);
    const unfinished = (marks: HistoryRun['marks']) => marks?.includes('unfinished') === true;
    // A run's end is its last word: a line of it still unfinished after that (an edit, a copy) changes
    // nothing, and a finished one is another run's.
    if (earlier && !unfinished(earlier.run.marks)) {
      if (!unfinished(run.marks)) runs.set(`${key} ${index}`, { run });
      return;
    }
    runs.delete(key);
    if (!earlier || !unfinished(run.marks)) {
      runs.set(key, { run });
      return;
    }
    const byPet = earlier.byPet ?? new Map(earlier.run.changes.map((change) => [change.petId, change]));
    for (const change of run.changes) byPet.set(change.petId, change);
    runs.set(key, { run, byPet });
  });
  // An amendment with before and after alike is a pet the run found already right, or a conflict: not written.
  return [...runs.values()]
    .map(({ run, byPet }) =>
      byPet
        ? { ...run, changes: [...byPet.values()].filter((change) => change.before !== change.after) }
        : run,
    )
    .filter((run) => run.changes.length > 0);
}

/**
 * The runs a bounded history keeps, in order: every unfinished run first, whatever its age or size (it is
 * all that tells what a run killed outright may have written) until an undo took it back whole, with the
 * run an unfinished undo takes back (undone again, to finish), then the newest others while they fit in
 * `maxBytes` (the newest run whole, whatever its size), `maxRuns` in all.
 */
export function keptRuns(runs: readonly HistoryRun[], maxRuns: number, maxBytes = Infinity): HistoryRun[] {
  const takenBack = new Set(
    runs.filter((run) => !run.marks?.some((mark) => mark !== 'forced')).map((run) => undoneBy(run.command)),
  );
  const unfinished = runs
    .filter((run) => run.marks?.includes('unfinished') && !takenBack.has(run.id))
    .slice(-maxRuns);
  const undone = new Set(unfinished.map((run) => undoneBy(run.command)));
  const kept = new Set([...unfinished, ...runs.filter((run) => undone.has(run.id))]);
  // Unbounded in size (a read), no run is serialized to be measured.
  const sizeOf = (run: HistoryRun) => (maxBytes === Infinity ? 0 : serialize(run).length);
  let bytes = 0;
  for (const run of kept) bytes += sizeOf(run);
  for (let index = runs.length - 1; index >= 0 && kept.size < maxRuns; index--) {
    const run = runs[index] as HistoryRun;
    if (kept.has(run)) continue;
    const size = sizeOf(run);
    if (index < runs.length - 1 && bytes + size > maxBytes) break;
    kept.add(run);
    bytes += size;
  }
  return runs.filter((run) => kept.has(run));
}
