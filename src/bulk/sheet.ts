import { CsvError } from 'csv-parse';
import { parse } from 'csv-parse/sync';
import { usageError } from '../errors';
import { printable } from '../printable';

/**
 * A sheet: CSV or TSV with a header line, as a spreadsheet saves it or `petinv list --csv` prints it.
 * Columns are found by their names, in any order and any case; the delimiter by the header line.
 */

/** `space`: a header such as `petId quantity`, its rows split on runs of spaces and tabs. */
export type Delimiter = ',' | '\t' | ';' | 'space';

export interface SheetHeader {
  delimiter: Delimiter;
  /** The header's column names, as written (trimmed). */
  names: readonly string[];
  petId: number;
  /** The new quantity: the `quantity` column, or a plan's `to`. */
  quantity: number;
  /** A plan's `from`: the quantity the row was read with. */
  from?: number;
  status?: number;
  /** The columns read by nobody, named once in a notice. */
  ignored: readonly string[];
}

/** A column's name as it is compared: lower case, without spaces, underscores and dashes. */
export const canonicalName = (name: string) => name.toLowerCase().replace(/[\s_-]+/g, '');

/** The columns petinv reads, by their canonical names. */
export const READ_COLUMNS = ['petid', 'quantity', 'to', 'from', 'status'] as const;
/** A dry run's own column (whether the pet was found): part of a plan, read by nobody, named by no notice. */
const PLAN_ONLY_COLUMNS = new Set(['found']);

/** What a column's name looks like: a word, perhaps with digits, spaces, dots or dashes after it. */
const COLUMN_NAME = /^\p{L}[\p{L}\p{N} _.()-]*$/u;

/** Excel's first line `sep=;`, which names the delimiter of the sheet below it. */
export function delimiterLine(line: string): Delimiter | undefined {
  const match = /^sep=([,;\t])$/i.exec(line);
  return match ? (match[1] as Delimiter) : undefined;
}

/** Counts each candidate outside quotes; the commonest wins, a comma on a tie. None: words split by spaces. */
export function findDelimiter(line: string): Delimiter {
  const counts = { ',': 0, '\t': 0, ';': 0 };
  let quoted = false;
  for (const character of line) {
    if (character === '"') quoted = !quoted;
    else if (!quoted && character in counts) counts[character as keyof typeof counts]++;
  }
  const [best, count] = Object.entries(counts).sort((a, b) => b[1] - a[1])[0] as [Delimiter, number];
  if (count === 0) return 'space';
  return counts[','] === count ? ',' : best;
}

/**
 * The cells of one record (RFC 4180: quoted cells, doubled quotes, delimiters and line breaks inside
 * quotes), or what is wrong with it. A record without quotes is split as it is, as csv-parse would.
 */
export function splitRecord(text: string, delimiter: Delimiter): string[] | { problem: string } {
  if (delimiter === 'space') return text.trim().split(/[ \t]+/);
  if (!text.includes('"')) return text.split(delimiter);
  try {
    // relax_quotes: a quote inside an unquoted cell is text, as quotesClosed reads it.
    const records = parse(text, {
      delimiter,
      relax_column_count: true,
      relax_quotes: true,
      bom: false,
    }) as string[][];
    if (records.length !== 1) return { problem: 'not one CSV record' };
    return records[0] as string[];
  } catch (error) {
    if (error instanceof CsvError) return { problem: `not valid CSV: ${printable(error.message, 120)}` };
    throw error;
  }
}

/**
 * How a record's quotes read (RFC 4180): whether a quoted cell is still open at its end, so that a line
 * break inside quotes continues the record on the next line; and whether a quoted cell was closed by a
 * quote that text follows (`"a "b" c"`), which RFC 4180 does not allow (its quotes were not doubled, or one
 * is missing; read leniently, such a cell ends wherever the next quote happens to be, and one that spans
 * lines takes in the rows between as text). Only a quote that opens a cell opens quotes; a quote inside an
 * unquoted cell (`12" shelf`) is text, and a stray one never swallows the rows below it.
 */
function readQuotes(text: string, delimiter: Delimiter): { open: boolean; closedOnText: boolean } {
  let quoted = false;
  let closedOnText = false;
  let cellStart = true;
  for (let index = 0; index < text.length; index++) {
    const character = text[index];
    if (quoted) {
      if (character !== '"') continue;
      if (text[index + 1] === '"') {
        index++;
        continue;
      }
      quoted = false;
      // What may follow a closing quote: the delimiter, the end of the line or record, or blanks before one.
      const rest = /^[ \t]*/.exec(text.slice(index + 1))?.[0].length ?? 0;
      const next = text[index + 1 + rest];
      if (next !== undefined && next !== delimiter && next !== '\n' && next !== '\r') closedOnText = true;
    } else if (character === delimiter || character === '\n') cellStart = true;
    else if (character === '"' && cellStart) {
      quoted = true;
      cellStart = false;
    } else if (character !== ' ' && character !== '\t') cellStart = false;
  }
  return { open: quoted, closedOnText };
}

/** Whether a record is complete: no quoted cell is still open at its end (see readQuotes). */
export function quotesClosed(text: string, delimiter: Delimiter): boolean {
  if (delimiter === 'space' || !text.includes('"')) return true;
  return !readQuotes(text, delimiter).open;
}

/** Whether a quoted cell is closed by a quote that text follows (see readQuotes). */
export function closesOnText(text: string, delimiter: Delimiter): boolean {
  if (delimiter === 'space' || !text.includes('"')) return false;
  return readQuotes(text, delimiter).closedOnText;
}

/**
 * The first line of lines input, read as a header when it names a petId column, or when it holds only
 * names (a header petinv cannot use, refused): undefined when it is a row of data.
 */
export function readHeader(line: string, lineNumber: number, given?: Delimiter): SheetHeader | undefined {
  const delimiter = given ?? findDelimiter(line);
  const cells = splitRecord(line, delimiter);
  if (!Array.isArray(cells)) return undefined;
  const names = cells.map((cell) => cell.trim());
  // `PetId`, `PET ID` (the table's heading), `pet_id` and `pet-id` all name the petId column.
  const lower = names.map(canonicalName);
  const named = lower.includes('petid');
  const known = new Set<string>(READ_COLUMNS);
  const filled = names.filter((name) => name !== '');
  // Without a petId column, only a line of two or more names, or one that petinv reads (`Quantity`), is
  // taken for a header (to be refused): a line of data with a typo stays a bad line of data.
  const allNames = filled.length > 0 && filled.every((name) => COLUMN_NAME.test(name));
  if (
    !named &&
    !(allNames && (filled.length >= 2 || known.has(lower[names.indexOf(filled[0] as string)] as string)))
  )
    return undefined;

  const where = `bulk input: the header (line ${lineNumber})`;
  const found = filled.length === 0 ? 'no named columns' : `columns ${filled.map(quoted).join(', ')}`;
  const need = 'it needs a petId column and a quantity (or to) column; from and status are read too';
  const only = (name: string): number | undefined => {
    const first = lower.indexOf(name);
    if (first !== -1 && lower.indexOf(name, first + 1) !== -1)
      throw usageError(
        `${where} names ${name === 'petid' ? 'petId' : name} twice; which one is meant? Rename or remove one`,
      );
    return first === -1 ? undefined : first;
  };
  const petId = only('petid');
  const quantity = only('quantity');
  const to = only('to');
  if (quantity !== undefined && to !== undefined)
    throw usageError(
      `${where} has both quantity and to; keep one, the column of the quantities to set (a plan's to)`,
    );
  const target = quantity ?? to;
  if (petId === undefined || target === undefined)
    throw usageError(`${where} has ${found}; ${need}. Nothing was sent`);
  const ignored = names.filter(
    (name, index) =>
      name !== '' && !known.has(lower[index] as string) && !PLAN_ONLY_COLUMNS.has(lower[index] as string),
  );
  return {
    delimiter,
    names,
    petId,
    quantity: target,
    from: only('from'),
    status: only('status'),
    ignored,
  };
}

const quoted = (text: string) => `"${printable(text, 40)}"`;

/** The header's notice: the columns nobody reads, named once. */
export function ignoredColumnsNotice(header: SheetHeader): string | undefined {
  const { ignored } = header;
  if (ignored.length === 0) return undefined;
  const list = ignored.map(quoted).join(', ');
  return `ignoring ${ignored.length === 1 ? 'column' : 'columns'} ${list}: petinv reads petId, quantity (or to), from and status`;
}
