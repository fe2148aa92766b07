import * as z from 'zod/mini';
import { parseInventoryJson } from '../contract/json';
import { parsePetId, parseQuantity } from '../contract/rules';
import { describeIssues, PET_STATUSES, PetId, QuantityValue } from '../contract/schemas';
import { usageError } from '../errors';
import { tryOr } from '../files/file-system';
import { plural } from '../output/plural';
import { printable } from '../printable';
import { type BulkEntry, type BulkInput, type BulkProblem, EntryStore } from './entries';
import { quoted, readPetId, readQuantity } from './numbers';
import {
  type ColumnRole,
  canonicalName,
  headerNotices,
  PLAN_ONLY_COLUMNS,
  roleOf,
  type SheetHeader,
  soundsLikeCount,
  uncheckedNotice,
} from './sheet';

/** What an object's keys said, for notices: keys nobody reads, and counts with no expected key beside them. */
export type JsonKeys = { ignored: Set<string>; unchecked: Set<string> };

/** One row as read: an update, what is wrong with it (and its pet, when that much was read), or nothing to send. */
export type ReadRow =
  | Omit<BulkEntry, 'line'>
  | { problem: string; pet?: string }
  | 'blank'
  | { uncounted: bigint };

const STATUSES = new Set<string>(PET_STATUSES);

/** A field of a headerless line: a number (or what a spreadsheet makes of one), a plan's true/false, or empty. */
const DATA_FIELD = /^([+-]?[\d.]|true$|false$|$)/;

/**
 * Whether a first line reads as data rather than a header: a JSON line (NDJSON; `{Pet ID},{Counted}` is no
 * JSON), or headerless fields each a number, a status or a plan's true/false. Anything else is a header.
 */
export const readsAsData = (line: string) =>
  line.startsWith('{')
    ? tryOr(() => JSON.parse(line), undefined) !== undefined
    : line.split(/[\s,]+/).every((field) => DATA_FIELD.test(field) || STATUSES.has(field));

/** A headerless line's fields: `petId quantity`, `petId status quantity` (list), `petId from to found` (a plan). */
export function fromFields(fields: string[]): ReadRow {
  const last = fields.at(-1);
  if ((last === 'true' || last === 'false') && (fields.length === 4 || fields.length === 3)) {
    const plan = fromFields(
      fields.length === 4 ? [fields[0] as string, fields[2] as string] : fields.slice(0, 2),
    );
    if (typeof plan !== 'object' || 'problem' in plan || fields.length === 3) return plan;
    const from = readQuantity(fields[1] as string, 'from');
    return typeof from === 'string' ? { problem: from, pet: fields[0] } : { ...plan, from };
  }
  const [petIdText, quantityText] =
    fields.length === 3 && STATUSES.has(fields[1] ?? '')
      ? [fields[0], fields[2]]
      : fields.length === 2
        ? fields
        : [];
  if (petIdText === undefined || quantityText === undefined)
    return { problem: `expected "petId quantity", got ${plural(fields.length, 'field')}` };
  const petId = readPetId(petIdText);
  if (typeof petId === 'string') return { problem: petId };
  const quantity = readQuantity(quantityText, 'quantity');
  if (typeof quantity === 'string') return { problem: quantity, pet: petIdText };
  return fields.length === 3 ? { petId, quantity, status: fields[1] as string } : { petId, quantity };
}

/** One update in any of the JSON shapes: an item (`list --json`), or a plan's step (`to`, and `from`, null for a pet not found). */
const UpdateObject = z.object({
  petId: PetId,
  quantity: z.optional(QuantityValue),
  to: z.optional(QuantityValue),
  from: z.optional(z.nullable(QuantityValue)),
  status: z.optional(z.string()),
});

/** The key each column role takes in UpdateObject. */
const JSON_KEYS: Readonly<Record<ColumnRole, keyof z.infer<typeof UpdateObject>>> = {
  petId: 'petId',
  counted: 'quantity',
  expected: 'from',
  status: 'status',
};

/** An object's keys read as a sheet's column names are; the others to `keys.ignored`, unless counts too. */
function byRole(raw: object, keys: JsonKeys): Record<string, unknown> | string {
  const named: Record<string, unknown> = {};
  const keyOf = new Map<string, string>();
  const alsoCounts = new Map<string, unknown>();
  for (const [key, value] of Object.entries(raw)) {
    const role = roleOf(key);
    const name = role === 'counted' && canonicalName(key) === 'to' ? 'to' : role && JSON_KEYS[role];
    if (name === undefined) {
      // Checked against the count, not ignored: a sheet names such a column as checked.
      const count = typeof value === 'string' ? (countIn(value) ?? value) : value;
      if (soundsLikeCount(key) && value !== null && value !== '') alsoCounts.set(key, count);
      else if (!PLAN_ONLY_COLUMNS.has(canonicalName(key))) keys.ignored.add(key);
      continue;
    }
    const before = keyOf.get(name);
    if (before !== undefined) return `has both ${quoted(before)} and ${quoted(key)}; give one`;
    keyOf.set(name, key);
    named[name] = value;
  }
  const counted = keyOf.get('quantity') ?? keyOf.get('to') ?? 'counted';
  // A count with nothing to check it, as a sheet's count without an expected column (headerNotices).
  const countKey = keyOf.get('quantity');
  if (countKey && !keyOf.has('from') && canonicalName(countKey) !== 'quantity') keys.unchecked.add(countKey);
  const quantity = named.quantity ?? named.to;
  for (const [key, value] of alsoCounts)
    if (value !== quantity) return twoCounts(counted, quantity, key, value);
  return named;
}

/** Counted and another column of counts hold two numbers, or only the other one does: which is meant? */
function twoCounts(counted: string, quantity: unknown, other: string, value: unknown): string {
  const holds = typeof quantity === 'number' ? `holds ${quantity}` : 'is empty';
  return `${quoted(counted)} ${holds} and ${quoted(other)} holds ${typeof value === 'number' ? value : JSON.stringify(value)}: which count is meant? Keep it in one column, named counted, and remove or rename the other`;
}

/** A whole number in a column that says it holds counts, `12.0` included (a spreadsheet's number format). */
const countIn = (text: string) => parseQuantity(text.replace(/^([+-]?\d+)[.,]0+$/, '$1'));

export function fromObject(raw: unknown, keys: JsonKeys): ReadRow {
  const named = typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? byRole(raw, keys) : raw;
  if (typeof named === 'string') return { problem: named };
  // As an empty counted cell (a CSV count sheet converted to JSON makes them null, or "").
  const counted = typeof named === 'object' && named !== null && 'quantity' in named ? named.quantity : 0;
  if (counted === null || counted === '') {
    const petId = PetId.safeParse((named as { petId?: unknown }).petId);
    return petId.success ? { uncounted: petId.data } : { problem: describeIssues(petId.error) };
  }
  const parsed = UpdateObject.safeParse(named);
  if (!parsed.success) return { problem: describeIssues(parsed.error) };
  const { petId, quantity, to, from, status } = parsed.data;
  if (quantity !== undefined && to !== undefined) return { problem: 'has both quantity and to; give one' };
  const target = quantity ?? to;
  if (target === undefined) return { problem: 'quantity: is required' };
  const update: ReadRow = { petId, quantity: target };
  if (from !== undefined && from !== null) update.from = from;
  if (status !== undefined) update.status = status;
  return update;
}

/** A row of a sheet, its cells chosen by the header's columns; an empty counted cell was not counted. */
export function fromCells(cells: readonly string[], header: SheetHeader): ReadRow {
  const cell = (index: number | undefined) => (index === undefined ? '' : (cells[index] ?? '').trim());
  if (cells.every((text) => text.trim() === '')) return 'blank';
  const width = header.names.length;
  const petIdText = cell(header.petId);
  const pet = petIdText === '' ? undefined : petIdText;
  if (cells.slice(width).some((text) => text.trim() !== ''))
    return { problem: `${plural(cells.length, 'cell')}, more than the header's ${width} columns`, pet };
  if (pet === undefined)
    return { problem: `no pet in the ${quoted(header.names[header.petId] as string)} column` };
  const unnamed = header.names.findIndex((name, index) => name === '' && cell(index) !== '');
  if (unnamed !== -1)
    return {
      problem: `${quoted(cell(unnamed))} under column ${unnamed + 1}, which has no name: name it, or clear it`,
      pet,
    };
  const petId = readPetId(petIdText);
  if (typeof petId === 'string') return { problem: petId };
  const countedText = cell(header.counted);
  const counted = header.names[header.counted] as string;
  const quantity = countedText === '' ? undefined : readQuantity(countedText, counted);
  if (typeof quantity === 'string') return { problem: quantity, pet };
  // A count another column holds, or anything there that is no count: which is meant cannot be told.
  for (const index of header.alsoCounts) {
    const other: unknown = cell(index) === '' ? quantity : (countIn(cell(index)) ?? cell(index));
    if (other !== quantity)
      return { problem: twoCounts(counted, quantity, header.names[index] as string, other), pet };
  }
  if (quantity === undefined) return { uncounted: petId };
  const update: ReadRow = { petId, quantity };
  const expectedText = cell(header.expected);
  if (expectedText !== '') {
    const from = readQuantity(expectedText, header.names[header.expected as number] as string);
    if (typeof from === 'string') return { problem: from, pet };
    update.from = from;
  }
  const status = cell(header.status);
  if (status !== '') update.status = status;
  return update;
}

/**
 * A row below the first that names a pet and a counted column is a header out of place (a title row
 * above it, two sheets in one): refused, as the rows below would be read by the wrong columns. `where`
 * names it (`row 5`); the header again in its own columns is a bad row.
 */
export function lateHeader(cells: readonly string[], where: string, header?: SheetHeader) {
  if (cells.some((cell) => /^\s*[+-]?\d/.test(cell))) return undefined;
  const roles = cells.map(roleOf);
  if (!roles.includes('petId') || !roles.includes('counted')) return undefined;
  if (header && roles.indexOf('petId') === header.petId && roles.indexOf('counted') === header.counted)
    return { problem: 'the header again' };
  throw usageError(
    `bulk input: ${where} names its columns (a header), but it is not the first line, so the rows below it could be read as other pets' numbers; put the header on the first line (remove a title row above it), or apply each sheet on its own. Nothing was sent`,
  );
}

const notJson = (error: unknown) => `not valid JSON: ${printable((error as Error).message, 120)}`;

export function fromJsonLine(text: string, keys: JsonKeys): ReadRow {
  try {
    return fromObject(parseInventoryJson(text), keys);
  } catch (error) {
    return { problem: notJson(error) };
  }
}

/** A JSON array, read whole (its bound is the reader's): an item a row. */
export function readJsonArray(text: string, rows: InputCollector): BulkInput {
  try {
    const items = parseInventoryJson(text);
    if (!Array.isArray(items)) rows.add(1, { problem: 'expected a JSON array' });
    else for (const [index, item] of items.entries()) rows.add(index + 1, fromObject(item, rows.jsonKeys));
  } catch (error) {
    rows.add(1, { problem: notJson(error) });
  }
  return rows.finish('item');
}

/** Gathers a reader's rows into the run's input: its entries, problems and notices. */
export class InputCollector {
  readonly entries = new EntryStore();
  readonly problems: BulkProblem[] = [];
  readonly notices: string[] = [];
  /** JSON keys read by nobody, and counts with no expected key beside them, named once in a notice. */
  readonly jsonKeys: JsonKeys = { ignored: new Set(), unchecked: new Set() };
  /** Rows of a sheet with an expected column that leave it empty (written with nothing to check), and its name. */
  private unchecked: { rows: number; column: string } | undefined;

  /** The sheet's header, read: its ignored columns said once, its expected column minded. */
  useHeader(header: SheetHeader) {
    this.notices.push(...headerNotices(header));
    const column = header.expected === undefined ? undefined : header.names[header.expected];
    if (column !== undefined) this.unchecked = { rows: 0, column };
  }

  add(line: number, row: ReadRow) {
    if (row === 'blank') return;
    if ('uncounted' in row) this.entries.push(line, row.uncounted, Number.NaN);
    else if ('problem' in row) {
      this.problems.push({ line, message: row.problem, ...(row.pet && { pet: row.pet }) });
      // A later row of a pet wins (settle), a refused one too: the earlier count is not what the sheet ends with.
      const petId = row.pet === undefined ? undefined : parsePetId(row.pet);
      if (petId !== undefined) this.entries.push(line, petId, Number.POSITIVE_INFINITY);
    } else {
      if (row.from === undefined && this.unchecked) this.unchecked.rows++;
      this.entries.push(line, row.petId, row.quantity, row.from, row.status);
    }
  }

  finish(unit: BulkInput['unit']): BulkInput {
    this.entries.settle(unit, this.problems);
    const { notCounted } = this.entries;
    // Said before a dry run too, whose summary has no such count.
    if (notCounted > 0)
      this.notices.push(
        `${plural(notCounted, 'row')} left uncounted (counted is empty): nothing is sent for ${notCounted === 1 ? 'it' : 'them'}`,
      );
    const { ignored, unchecked: countKeys } = this.jsonKeys;
    if (ignored.size > 0)
      this.notices.push(
        `ignoring ${ignored.size === 1 ? 'key' : 'keys'} ${[...ignored].map(quoted).join(', ')}: petinv reads petId, quantity (or to), from (or expected) and status`,
      );
    if (countKeys.size > 0) this.notices.push(uncheckedNotice('key', [...countKeys].map(quoted).join(', ')));
    const { rows, column } = this.unchecked ?? { rows: 0, column: '' };
    if (rows > 0)
      this.notices.push(
        `${plural(rows, 'row')} ${rows === 1 ? 'leaves' : 'leave'} ${quoted(column)} empty: written whatever the pet holds, unchecked`,
      );
    this.problems.sort((a, b) => a.line - b.line);
    return { entries: this.entries, problems: this.problems, notices: this.notices, unit };
  }
}
