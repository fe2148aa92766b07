import { createReadStream } from 'node:fs';
import { stringifyJson } from '../contract/json';
import type { InventoryItem } from '../contract/schemas';
import { PetinvError, usageError } from '../errors';
import { describeFileSystemError } from '../files/file-system';
import type { CommandContext } from '../output/context';
import { plural } from '../output/plural';
import { EntryStore, problemPlace } from './entries';
import { type BulkEntry, type BulkInput, readBulkInput } from './input';
import type { PipelineOptions } from './options';
import { type Conflict, namedFirst, skippedJson, skippedResult } from './results';

/** Where a sheet comes from, and how its bad rows are met. */
export interface SheetSource {
  /** The file, or undefined (or `-`) for stdin. */
  file?: string;
  /** Send nothing if any row is bad. */
  strict: boolean;
  /** Results stream as NDJSON: the bad rows are results too. */
  ndjson: boolean;
}

/** The bulk input as a stream: stdin, or the file (whose failure to open is met as it is read). */
function openBulkSource(file: string | undefined, context: CommandContext): AsyncIterable<Buffer | string> {
  if (file !== undefined && file !== '-') return createReadStream(file);
  // Typed at a terminal, the input would otherwise look like a command that hangs.
  if (context.stdin.isTTY)
    context.stderr.write(
      'petinv: reading updates from stdin, one "petId quantity" a line; end with Ctrl-D on a line of its own (Ctrl-C cancels)\n',
    );
  return context.stdin;
}

/**
 * A notice a person should hear once: a line on stderr, or with --json a JSON line there, held until the
 * run ends (CommandContext.heldNotices) so that a failing run prints one line.
 */
export function writeNotice(message: string, context: CommandContext) {
  if (context.json && context.heldNotices) context.heldNotices.push(message);
  else
    context.stderr.write(
      context.json ? `${stringifyJson({ notice: { message } })}\n` : `petinv: note: ${message}\n`,
    );
}

/** What petinv says as a signal stops it: at once, with --json too, as nothing prints after it. */
export const writeQuitNotice = (message: string, context: CommandContext) =>
  context.stderr.write(context.json ? `${stringifyJson({ notice: { message } })}\n` : `petinv: ${message}\n`);

/**
 * Bad input lines: in a run that streams results (--ndjson, --json) they are results too, so a script
 * that selects the failures sees them; otherwise each is a line on stderr. --strict stops here.
 */
function reportProblems(input: BulkInput, source: SheetSource, context: CommandContext) {
  const inResults = !source.strict && (context.json || source.ndjson);
  const refused =
    source.strict && input.problems.length > 0
      ? usageError(`--strict: ${plural(input.problems.length, `bad ${input.unit}`)}; nothing was sent`)
      : undefined;
  // --strict --json: the bad lines stand beside the one error line, as `skipped`.
  if (refused && context.json) throw refused.withJson({ skipped: input.problems.map(skippedResult) });
  for (const problem of input.problems) {
    // --json prints them at the head of its one array at the end.
    if (inResults) {
      if (source.ndjson) context.stdout.write(`${skippedJson(problem)}\n`);
    } else if (context.json) context.stderr.write(`${skippedJson(problem)}\n`);
    else
      context.stderr.write(
        `petinv: ${problemPlace(input.unit, problem)}: ${problem.message}${source.strict ? '' : ' (skipped)'}\n`,
      );
  }
  if (refused) throw refused;
}

/** The sheet read and checked, its notices said and bad rows reported: before the service is asked. */
export async function readSheet(source: SheetSource, context: CommandContext): Promise<BulkInput> {
  const input = await readBulkInput(openBulkSource(source.file, context)).catch((error: unknown) => {
    if (error instanceof PetinvError) throw error;
    throw usageError(
      `cannot read ${source.file === undefined ? 'stdin' : `--file ${source.file}`}: ${describeFileSystemError(error)}`,
    );
  });
  // Nothing but blank lines, or no bytes at all: from a file, more likely a failed save than nothing to do.
  const { entries, problems } = input;
  const nothing = entries.length + entries.notCounted + problems.length === 0;
  if (nothing && input.unit === 'line' && source.file !== undefined && source.file !== '-')
    throw usageError(`--file ${source.file} is empty (no rows, no header): was it saved? Nothing was sent`);
  // A header alone is an empty inventory's export, or a save that lost its rows: said, not refused.
  if (nothing && input.unit === 'row')
    writeNotice('the sheet has a header and no rows: nothing is sent', context);
  for (const notice of input.notices) writeNotice(notice, context);
  reportProblems(input, source, context);
  return input;
}

/** What a run will do, decided against one read of the current inventory. */
export interface SheetPlan {
  /** The updates to send, in input order, each with its row's own `from`: checked again as it is sent (unless forced). */
  send: EntryStore;
  /** Rows whose pet already holds the quantity wanted: not sent (with --all, sent all the same). */
  alreadyRight: number;
  /** The current item of each update to send; undefined for a pet that is not in the inventory. */
  before: (InventoryItem | undefined)[];
  conflicts: Conflict[];
  /** Pets not in the inventory (sent anyway: the service decides, as for one pet). */
  unknown: number;
  /** Rows whose status differs from the service's (the API does not write status). */
  statusDiffers: number;
  /** Updates sent although their pet no longer holds their `from` (--force). */
  writtenOver: number;
  /** Rows already right whose pet no longer holds their `from` (changedSinceRead): named in a note. */
  changedToWanted: BulkEntry[];
}

type PlanOptions = Pick<PipelineOptions, 'all' | 'force' | 'undo'> & {
  /** What an earlier run of the same input left on each pet it wrote (none since changed it): its own doing. */
  leftBefore?: ReadonlyMap<bigint, number | null>;
};

/**
 * What to do with one row given the pet's item now: a row whose pet already holds its wanted quantity is
 * already right whatever its `from` (that is how a sheet applied again after a stopped run picks up where
 * it stopped), sent all the same with `all`; a row whose `from` no longer matches is a conflict.
 */
export function decideRow(entry: BulkEntry, item: InventoryItem | undefined, options: PlanOptions) {
  if (item === undefined) return 'send';
  if (item.quantity === entry.quantity) return options.all ? 'alreadyRightSent' : 'alreadyRight';
  if (entry.from === undefined || entry.from === item.quantity || options.force) return 'send';
  const { line, petId, from, quantity: wanted } = entry;
  return { line, petId, from, current: item.quantity, wanted };
}

/**
 * A row already right whose pet no longer holds its `from` (a colleague's sale after the count hides there),
 * not as an earlier run of the input left it, nor in an undo (a pet its run never wrote holds its before).
 */
export const changedSinceRead = (
  entry: BulkEntry,
  current: number | null | undefined,
  options: PlanOptions,
) =>
  !options.undo &&
  entry.from !== undefined &&
  current != null &&
  current !== entry.from &&
  options.leftBefore?.get(entry.petId) !== current;
export const changedToWantedNotice = (entries: BulkEntry[]) =>
  `${plural(entries.length, 'pet')} already ${entries.length === 1 ? 'holds' : 'hold'} the quantity wanted but not the one the input expected: changed since the input was read (by someone else, or an earlier run of it); check ${namedFirst(entries, ({ petId, quantity, from }) => `pet ${petId} (${quantity}, expected ${from})`)}`;

/** Plans the rows against the current inventory, each as decideRow says. */
export function planSheet(
  entries: Iterable<BulkEntry>,
  current: ReadonlyMap<bigint, InventoryItem>,
  options: PlanOptions,
): SheetPlan {
  const plan: SheetPlan = {
    send: new EntryStore(),
    before: [],
    alreadyRight: 0,
    conflicts: [],
    unknown: 0,
    statusDiffers: 0,
    writtenOver: 0,
    changedToWanted: [],
  };
  for (const entry of entries) {
    const item = current.get(entry.petId);
    if (item === undefined) plan.unknown++;
    else if (entry.status !== undefined && entry.status !== item.status) plan.statusDiffers++;
    const decision = decideRow(entry, item, options);
    const alreadyRight = decision === 'alreadyRight' || decision === 'alreadyRightSent';
    if (alreadyRight) plan.alreadyRight++;
    if (alreadyRight && changedSinceRead(entry, item?.quantity, options)) plan.changedToWanted.push(entry);
    if (typeof decision === 'object') plan.conflicts.push(decision);
    else if (decision !== 'alreadyRight') {
      if (decision === 'send' && item && entry.from !== undefined && entry.from !== item.quantity)
        plan.writtenOver++;
      plan.send.push(entry.line, entry.petId, entry.quantity, entry.from);
      plan.before.push(item);
    }
  }
  return plan;
}

/** What a person should know of a plan before it runs: statuses it does not write, pets --force writes over. */
export function planNotices({ statusDiffers, writtenOver, changedToWanted }: SheetPlan, envName: string) {
  const one = (count: number, single: string, more: string) => (count === 1 ? single : more);
  return [
    statusDiffers > 0 &&
      `${plural(statusDiffers, 'row')} ${one(statusDiffers, 'gives', 'give')} a status other than the service's in ${envName}; status is never written (the service sets quantities only)`,
    writtenOver > 0 &&
      `--force: ${plural(writtenOver, 'pet')} no longer ${one(writtenOver, 'holds its', 'hold their')} from (changed since the input was read), and ${one(writtenOver, 'is', 'are')} written over all the same`,
    changedToWanted.length > 0 && changedToWantedNotice(changedToWanted),
  ].filter((notice) => notice !== false);
}
