import { maybeApplied } from '../client/write-outcome';
import { stringifyJson } from '../contract/json';
import { PetinvError } from '../errors';
import type { OutputChoice } from '../output/choose';
import { type Column, createExporter, type Exporter } from '../output/exporter';
import { itemValue } from '../output/inventory';
import { plural } from '../output/plural';
import type { BulkEntry, BulkProblem } from './input';
import type { BulkResult } from './run';

/** A bulk run's results as they are printed: JSON values, rows of -o table|tsv|csv, and its conflicts. */

/** One result as JSON: `input` its line (or position in a JSON array), `item` as the service returned it. */
export function resultJson(result: BulkResult): string {
  return stringifyJson(
    result.ok
      ? { input: result.line, ok: true, item: itemValue(result.item) }
      : {
          input: result.line,
          ok: false,
          ...(maybeApplied(result.error) && { maybeApplied: true }),
          petId: result.petId,
          quantity: result.quantity,
          error: result.error.body,
        },
  );
}

/** A skipped input line as a result (a JSON value: --json heads its array with these). */
export function skippedResult(problem: BulkProblem) {
  return {
    input: problem.line,
    ok: false,
    skipped: true,
    error: { code: 'bad_input', message: problem.message, status: null },
  };
}

export const skippedJson = (problem: BulkProblem): string => stringifyJson(skippedResult(problem));

/** An entry a run that stopped early never sent. */
export function notSentJson(entry: BulkEntry): string {
  return stringifyJson({
    input: entry.line,
    ok: false,
    notSent: true,
    petId: entry.petId,
    quantity: entry.quantity,
  });
}

/** A result, or an entry never sent, as a row of -o table|tsv|csv. */
export interface BulkRow {
  input: number;
  result: 'updated' | 'failed' | 'maybe applied' | 'not sent' | 'conflict';
  petId: bigint;
  quantity: number;
  status: string | null;
  error: string | null;
  message: string | null;
}

const BULK_COLUMNS: readonly Column<BulkRow>[] = [
  { key: 'input', heading: 'INPUT', value: (row) => row.input, align: 'right' },
  { key: 'result', heading: 'RESULT', value: (row) => row.result },
  { key: 'petId', heading: 'PET ID', value: (row) => row.petId, align: 'right' },
  { key: 'quantity', heading: 'QUANTITY', value: (row) => row.quantity, align: 'right' },
  { key: 'status', heading: 'STATUS', value: (row) => row.status },
  { key: 'error', heading: 'ERROR', value: (row) => row.error },
  { key: 'message', heading: 'MESSAGE', value: (row) => row.message },
];

/** A row of -o table|tsv|csv; what it does not give is empty. */
const bulkRow = (
  row: Pick<BulkRow, 'input' | 'result' | 'petId' | 'quantity'> & Partial<BulkRow>,
): BulkRow => ({
  status: null,
  error: null,
  message: null,
  ...row,
});

export function resultRow(result: BulkResult): BulkRow {
  const { line: input, petId } = result;
  return result.ok
    ? bulkRow({ input, result: 'updated', petId, quantity: result.item.quantity, status: result.item.status })
    : bulkRow({
        input,
        result: maybeApplied(result.error) ? 'maybe applied' : 'failed',
        petId,
        quantity: result.quantity,
        error: result.error.body.code,
        message: result.error.body.message,
      });
}

export const notSentRow = ({ line, petId, quantity }: BulkEntry): BulkRow =>
  bulkRow({ input: line, result: 'not sent', petId, quantity });

/** A row whose `from` no longer matches the pet's quantity: someone changed it since the sheet was read. */
export interface Conflict {
  line: number;
  petId: bigint;
  from: number;
  current: number;
  wanted: number;
}

/** A conflict as a result (a JSON value: --json's array holds these, --ndjson prints each). */
export function conflictResult(conflict: Conflict, envName: string) {
  return {
    input: conflict.line,
    ok: false,
    conflict: true,
    petId: conflict.petId,
    from: conflict.from,
    current: conflict.current,
    quantity: conflict.wanted,
    error: { code: 'conflict', message: conflictMessage(conflict, envName), status: null },
  };
}

export function conflictMessage(conflict: Conflict, envName: string): string {
  return `pet ${conflict.petId} holds ${conflict.current} in ${envName}, not ${conflict.from} as expected: someone changed it since; not set to ${conflict.wanted} (--force sets it anyway)`;
}

/** A conflict as a row: its wanted quantity, and the message with from and current. */
export const conflictRow = (conflict: Conflict, envName: string): BulkRow =>
  bulkRow({
    input: conflict.line,
    result: 'conflict',
    petId: conflict.petId,
    quantity: conflict.wanted,
    error: 'conflict',
    message: conflictMessage(conflict, envName),
  });

/** -o table|tsv|csv: a row per result as it completes, the entries never sent last; skipped lines stay on stderr. */
export function resultExporter(output: OutputChoice): Exporter<BulkRow> {
  return createExporter(BULK_COLUMNS, output);
}

/** Conflicts end a run with their own exit status: nothing failed, but not everything was written. */
export function conflictError(conflicts: readonly Conflict[], envName: string): PetinvError {
  return new PetinvError(
    'conflict',
    `${plural(conflicts.length, 'conflict')} in ${envName}: pet ${petList(conflicts)} changed since the input was read, and kept ${conflicts.length === 1 ? 'its' : 'their'} quantity; check them, or pass --force to write anyway`,
    { code: 'conflict' },
  );
}

/** The first `shown` of `items` by `name`, the rest counted: `12, 40 and 3 more`. */
export function namedFirst<T>(items: readonly T[], name: (item: T) => unknown, shown = 10): string {
  const more = items.length > shown ? ` and ${items.length - shown} more` : '';
  return `${items.slice(0, shown).map(name).join(', ')}${more}`;
}

/** By petId: lists of pets are read by people looking for one, whatever order the answers came in. */
export const byPetId = (a: { petId: bigint }, b: { petId: bigint }) =>
  a.petId < b.petId ? -1 : a.petId > b.petId ? 1 : 0;

/** The conflicts' pets, the first ten named. */
export const petList = (conflicts: readonly Conflict[]) =>
  namedFirst([...conflicts].sort(byPetId), (conflict) => conflict.petId);
