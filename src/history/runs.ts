import * as z from 'zod/mini';
import { describeIssues } from '../contract/issues';

/** A run as the history keeps it, one JSON line each (store.ts keeps the file). */

/** One pet a run wrote: its quantity before (null: not in the inventory then) and after. */
export interface HistoryChange {
  petId: bigint;
  before: number | null;
  after: number;
}

const HISTORY_MARKS = ['interrupted', 'forced', 'failed'] as const;

const Quantity = z.number().check(z.refine(Number.isSafeInteger, 'must be an integer'));
const HistoryLine = z.object({
  /** Its name for `petinv undo RUN`: when it ran, and four random hex digits. */
  id: z.string(),
  /** ISO 8601, UTC. */
  at: z.string(),
  env: z.string(),
  /** The service's base URL. */
  service: z.string(),
  /** What ran: `set`, `adjust`, `set --file counts.csv`, `undo ID`. */
  command: z.string(),
  // [petId as decimal text, before, after]: compact, a run may write ten thousand pets.
  changes: z.array(z.tuple([z.string().check(z.regex(/^-?\d{1,20}$/)), z.nullable(Quantity), Quantity])),
  /** The terminal session it ran in (session.ts): a bare undo passes over other sessions' runs. */
  session: z.optional(z.string()),
  /** What a person should know of it: stopped before its end, --force, some updates failed. */
  marks: z.optional(z.array(z.enum(HISTORY_MARKS))),
});

export type HistoryRun = Omit<z.infer<typeof HistoryLine>, 'changes'> & { changes: HistoryChange[] };

export function serialize(run: HistoryRun): string {
  const changes = run.changes.map((change) => [String(change.petId), change.before, change.after]);
  return `${JSON.stringify({ ...run, changes })}\n`;
}

/** The runs of a history file's text; each damaged line is told to `damaged` by its number. */
export function parseHistory(text: string, damaged: (line: number, why: string) => void): HistoryRun[] {
  const runs: HistoryRun[] = [];
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
    const { changes, ...run } = parsed.data;
    runs.push({
      ...run,
      changes: changes.map(([petId, before, after]) => ({ petId: BigInt(petId), before, after })),
    });
  });
  return runs;
}
