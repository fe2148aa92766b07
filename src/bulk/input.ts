import { TextDecoder } from 'node:util';
import * as z from 'zod/mini';
import { parseInventoryJson } from '../contract/json';
import {
  describeIssues,
  PET_ID_RULE,
  PET_STATUSES,
  PetId,
  parsePetId,
  parseQuantity,
  QUANTITY_TEXT_RULE,
  QuantityValue,
} from '../contract/schemas';
import { usageError } from '../errors';
import { plural } from '../output/plural';
import { printable } from '../printable';
import { type BulkEntries, type BulkEntry, type BulkProblem, EntryStore } from './entries';
import {
  canonicalName,
  closesOnText,
  type Delimiter,
  delimiterLine,
  findDelimiter,
  ignoredColumnsNotice,
  quotesClosed,
  readHeader,
  type SheetHeader,
  splitRecord,
} from './sheet';

export type { BulkEntries, BulkEntry, BulkProblem } from './entries';

export interface BulkInput {
  entries: BulkEntries;
  problems: BulkProblem[];
  /** What the reader noticed and a person should hear once (the columns of a sheet nobody reads). */
  notices: string[];
  /** "line" or "item", as the problems and results call a position. */
  unit: 'line' | 'item';
}

/** A line longer than this is a bad line: no update needs more than a few dozen bytes. */
export const MAX_LINE_BYTES = 64 * 1024;
/** A line still without its end after this much is not text input at all (`--file /dev/zero`). */
export const MAX_UNENDED_LINE_BYTES = 1024 * 1024;
/** More lines than this in one run is refused, so that input that never ends stops. */
export const MAX_INPUT_LINES = 10_000_000;
/** A JSON array is parsed whole, so it is bounded like an answer from the service. */
export const MAX_JSON_INPUT_BYTES = 256 * 1024 * 1024;

/**
 * One update in any of the accepted shapes: an item (`petinv list --json`), or a step of a plan (`to`, and
 * `from`, null for a pet that was not found); other fields are ignored.
 */
const UpdateObject = z.object({
  petId: PetId,
  quantity: z.optional(QuantityValue),
  to: z.optional(QuantityValue),
  from: z.optional(z.nullable(QuantityValue)),
  status: z.optional(z.string()),
});

type ReadUpdate = Omit<BulkEntry, 'line'>;

const STATUSES = new Set<string>(PET_STATUSES);
const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;
const EMPTY_CELLS = /^[\s,;]*$/;
/** A cell that may name the petId column (`petId`, `PET ID`, `pet_id`), checked before a line is read as a header. */
const LOOKS_LIKE_PET_ID = /pet[\s_-]*id/i;
const BYTE_ORDER_MARK = Buffer.from([0xef, 0xbb, 0xbf]);

/** An echoed piece of input, short and printable, quoted. */
const quoted = (text: string) => `"${printable(text, 40)}"`;

function fromFields(fields: string[]): ReadUpdate | string {
  const last = fields.at(-1);
  // A plan as a dry run prints it in a pipe: `petId from to found`, from empty for a pet not found.
  if ((last === 'true' || last === 'false') && (fields.length === 4 || fields.length === 3)) {
    const plan = fromFields(
      fields.length === 4 ? [fields[0] as string, fields[2] as string] : fields.slice(0, 2),
    );
    if (typeof plan === 'string' || fields.length === 3) return plan;
    const fromText = fields[1] as string;
    const from = parseQuantity(fromText);
    if (from === undefined) return `from ${quoted(fromText)} is not ${QUANTITY_TEXT_RULE}`;
    return { ...plan, from };
  }
  // `petId quantity`, or `petId status quantity` as `petinv list` prints it piped or as CSV.
  const [petIdText, quantityText] =
    fields.length === 3 && STATUSES.has(fields[1] ?? '')
      ? [fields[0], fields[2]]
      : fields.length === 2
        ? fields
        : [];
  if (petIdText === undefined || quantityText === undefined) {
    return `expected "petId quantity", got ${plural(fields.length, 'field')}`;
  }
  const petId = parsePetId(petIdText);
  if (petId === undefined) return `petId ${quoted(petIdText)} is not ${PET_ID_RULE}`;
  const quantity = parseQuantity(quantityText);
  if (quantity === undefined) return `quantity ${quoted(quantityText)} is not ${QUANTITY_TEXT_RULE}`;
  const update: ReadUpdate = { petId, quantity };
  if (fields.length === 3) update.status = fields[1] as string;
  return update;
}

function fromObject(raw: unknown): ReadUpdate | string {
  const parsed = UpdateObject.safeParse(raw);
  if (!parsed.success) return describeIssues(parsed.error);
  const { petId, quantity, to, from, status } = parsed.data;
  if (quantity !== undefined && to !== undefined) return 'has both quantity and to; give one';
  const target = quantity ?? to;
  if (target === undefined) return 'quantity: is required';
  const update: ReadUpdate = { petId, quantity: target };
  if (from !== undefined && from !== null) update.from = from;
  if (status !== undefined) update.status = status;
  return update;
}

/** A row of a sheet, its cells chosen by the header's names. */
function fromCells(cells: readonly string[], header: SheetHeader): ReadUpdate | string | undefined {
  const cell = (index: number | undefined) => (index === undefined ? '' : (cells[index] ?? '').trim());
  if (cells.every((text) => text.trim() === '')) return undefined;
  const width = header.names.length;
  if (cells.slice(width).some((text) => text.trim() !== ''))
    return `${plural(cells.length, 'cell')}, more than the header's ${width} columns`;
  const petIdText = cell(header.petId);
  if (petIdText === '') return 'no petId';
  const petId = parsePetId(petIdText);
  if (petId === undefined) return `petId ${quoted(petIdText)} is not ${PET_ID_RULE}`;
  const name = (header.names[header.quantity] as string).toLowerCase();
  const quantityText = cell(header.quantity);
  if (quantityText === '') return `no ${name}`;
  const quantity = parseQuantity(quantityText);
  if (quantity === undefined) return `${name} ${quoted(quantityText)} is not ${QUANTITY_TEXT_RULE}`;
  const update: ReadUpdate = { petId, quantity };
  const fromText = cell(header.from);
  if (fromText !== '') {
    const from = parseQuantity(fromText);
    if (from === undefined) return `from ${quoted(fromText)} is not ${QUANTITY_TEXT_RULE}`;
    update.from = from;
  }
  const status = cell(header.status);
  if (status !== '') update.status = status;
  return update;
}

const notJson = (error: unknown) => `not valid JSON: ${printable((error as Error).message, 120)}`;

/**
 * Reads bulk updates as they arrive: a JSON array (read whole, up to MAX_JSON_INPUT_BYTES), or lines of
 * NDJSON or `petId quantity` split by whitespace, comma or tab, each line handled as it completes, so
 * memory holds the entries and never the input. Feed it with push(), then call end().
 */
export class BulkInputReader {
  private readonly entries = new EntryStore();
  private readonly problems: BulkProblem[] = [];
  private mode: 'start' | 'lines' | 'json' = 'start';
  /** Bytes of the line not yet ended, or of the JSON array. */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** The current line is past MAX_LINE_BYTES: its bytes are dropped until its end. */
  private overlong = false;
  private lineNumber = 0;
  private atStart = true;
  private readonly notices: string[] = [];
  /** Lines input: `start` until its first line of data, then a sheet (a header came first), or bare lines. */
  private shape: 'start' | 'sheet' | 'bare' = 'start';
  private header?: SheetHeader;
  /** The delimiter a `sep=` line named. */
  private delimiter?: Delimiter;
  /** A sheet's record whose quotes are still open at its line's end: it goes on on the next line. */
  private record?: { line: number; text: string };
  /** The last chunk ended in a CR: an LF that starts the next one ends no other line. */
  private afterCarriageReturn = false;

  constructor(private readonly maxLines = MAX_INPUT_LINES) {}

  push(chunk: Buffer) {
    let data = chunk;
    if (this.atStart) {
      // A byte-order mark may stand before a JSON array as before lines; it is not part of either.
      const head = Buffer.concat([...this.pending, data]);
      if (head.length < BYTE_ORDER_MARK.length && BYTE_ORDER_MARK.subarray(0, head.length).equals(head)) {
        this.pending = [head];
        return;
      }
      this.pending = [];
      this.atStart = false;
      data = head.subarray(0, 3).equals(BYTE_ORDER_MARK) ? head.subarray(3) : head;
    }
    if (this.mode === 'start') {
      const first = data.findIndex(
        (byte) => byte !== 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d,
      );
      if (first === -1) {
        this.keep(data);
        return;
      }
      this.mode = data[first] === 0x5b ? 'json' : 'lines';
      const held = Buffer.concat(this.pending);
      this.pending = [];
      this.pendingBytes = 0;
      if (held.length > 0) this.push(held);
    }
    if (this.mode === 'json') {
      this.pendingBytes += data.length;
      if (this.pendingBytes > MAX_JSON_INPUT_BYTES) {
        throw usageError(
          `bulk input: a JSON array larger than ${MAX_JSON_INPUT_BYTES / 2 ** 20} MiB; split it, or give it as lines (NDJSON)`,
        );
      }
      this.pending.push(data);
      return;
    }
    // A line ends at LF, CRLF, or a CR alone (Excel for Mac's "CSV (Macintosh)" ends its lines so).
    let start = 0;
    if (this.afterCarriageReturn && data.length > 0) {
      this.afterCarriageReturn = false;
      if (data[0] === NEWLINE) start = 1;
    }
    let newline = data.indexOf(NEWLINE, start);
    let carriageReturn = data.indexOf(CARRIAGE_RETURN, start);
    for (;;) {
      if (newline !== -1 && newline < start) newline = data.indexOf(NEWLINE, start);
      if (carriageReturn !== -1 && carriageReturn < start)
        carriageReturn = data.indexOf(CARRIAGE_RETURN, start);
      const end =
        newline === -1 ? carriageReturn : carriageReturn === -1 ? newline : Math.min(newline, carriageReturn);
      if (end === -1) break;
      this.keep(data.subarray(start, end));
      this.endLine();
      start = end + 1;
      if (end === carriageReturn) {
        // CRLF is one line end, even split between two chunks.
        if (start === data.length) this.afterCarriageReturn = true;
        else if (data[start] === NEWLINE) start++;
      }
    }
    if (start < data.length) this.keep(data.subarray(start));
  }

  end(): BulkInput {
    if (this.atStart && this.pending.length > 0) {
      this.atStart = false;
      const held = Buffer.concat(this.pending);
      this.pending = [];
      this.push(held);
    }
    if (this.mode === 'json') return this.endJson();
    if (this.pendingBytes > 0 || this.overlong) this.endLine();
    if (this.record) {
      // The rows below it were read into its cell: say which, or they are missed unsaid.
      const below = this.record.text.split('\n').length - 1;
      const last = this.record.line + below;
      const taken =
        below === 0
          ? ''
          : `; line${below === 1 ? ` ${last}` : `s ${this.record.line + 1} to ${last}`} below it ${below === 1 ? 'was' : 'were'} read into its cell, not as ${below === 1 ? 'a row' : 'rows'}`;
      this.problems.push({
        line: this.record.line,
        message: `a quote opened in this row is never closed${taken}`,
      });
      this.record = undefined;
    }
    this.entries.removeDuplicates('line', this.problems);
    this.problems.sort((a, b) => a.line - b.line);
    return { entries: this.entries, problems: this.problems, notices: this.notices, unit: 'line' };
  }

  /** Holds the bytes of a line until its end (or, before the first printable byte, the blank start). */
  private keep(bytes: Buffer) {
    this.pendingBytes += bytes.length;
    if (this.pendingBytes > MAX_UNENDED_LINE_BYTES) {
      throw usageError(
        this.mode === 'start'
          ? `bulk input: more than ${MAX_UNENDED_LINE_BYTES / 2 ** 20} MiB of blank space`
          : `bulk input: line ${this.lineNumber + 1} has no end within ${MAX_UNENDED_LINE_BYTES / 2 ** 20} MiB; is it text, one update a line?`,
      );
    }
    if (this.mode === 'lines' && (this.overlong || this.pendingBytes > MAX_LINE_BYTES)) {
      // Only its length matters now: it will be reported, not read.
      this.overlong = true;
      this.pending = [];
      return;
    }
    if (bytes.length > 0) this.pending.push(bytes);
  }

  private endLine() {
    this.lineNumber++;
    if (this.lineNumber > this.maxLines) {
      throw usageError(
        `bulk input: more than ${this.maxLines.toLocaleString('en-US')} lines; split it into several runs`,
      );
    }
    const bytes = this.pending.length === 1 ? (this.pending[0] as Buffer) : Buffer.concat(this.pending);
    const overlong = this.overlong;
    this.pending = [];
    this.pendingBytes = 0;
    this.overlong = false;
    if (overlong) {
      const line = this.record?.line ?? this.lineNumber;
      this.record = undefined;
      this.problems.push({
        line,
        message: `longer than ${MAX_LINE_BYTES / 1024} KiB; one update needs a few dozen bytes`,
      });
      return;
    }
    // A line ends at an LF or CR byte, which never stands inside a UTF-8 sequence: each decodes alone.
    this.addLine(this.lineNumber, bytes.toString('utf8'));
  }

  private addLine(lineNumber: number, rawLine: string) {
    if (this.shape === 'sheet') {
      this.addSheetLine(lineNumber, rawLine.endsWith('\r') ? rawLine.slice(0, -1) : rawLine);
      return;
    }
    const line = rawLine.trim();
    if (line === '' || line.startsWith('#')) return;
    if (this.shape === 'start') {
      // Excel may write `sep=;` above the header: the delimiter, said rather than guessed.
      const said = this.delimiter === undefined ? delimiterLine(rawLine.replace(/\r$/, '')) : undefined;
      if (said !== undefined) {
        this.delimiter = said;
        return;
      }
      this.shape = 'bare';
      // A first line that names its columns (or has only names) is a sheet's header.
      this.header = line.startsWith('{') ? undefined : readHeader(line, lineNumber, this.delimiter);
      if (this.header) {
        this.shape = 'sheet';
        const notice = ignoredColumnsNotice(this.header);
        if (notice) this.notices.push(notice);
        return;
      }
    }
    if (line.startsWith('{')) {
      let raw: unknown;
      try {
        raw = parseInventoryJson(line);
      } catch (error) {
        this.add(lineNumber, notJson(error));
        return;
      }
      this.add(lineNumber, fromObject(raw));
      return;
    }
    // A row of empty cells, as a spreadsheet leaves below its data.
    if (EMPTY_CELLS.test(line)) return;
    this.refuseLateHeader(lineNumber, line);
    this.add(lineNumber, fromFields(line.split(/[\s,]+/)));
  }

  /** A line of a sheet: a record, or part of one whose quoted cell holds a line break. */
  private addSheetLine(lineNumber: number, line: string) {
    const header = this.header as SheetHeader;
    if (this.record) {
      this.record.text += `\n${line}`;
      if (this.record.text.length > MAX_LINE_BYTES) {
        this.problems.push({
          line: this.record.line,
          message: `a quoted cell open for more than ${MAX_LINE_BYTES / 1024} KiB; is a quote missing?`,
        });
        this.record = undefined;
        return;
      }
      if (!quotesClosed(this.record.text, header.delimiter)) return;
      const { line: first, text } = this.record;
      this.record = undefined;
      this.addRecord(first, text, header);
      return;
    }
    if (!quotesClosed(line, header.delimiter)) {
      this.record = { line: lineNumber, text: line };
      return;
    }
    this.addRecord(lineNumber, line, header);
  }

  private addRecord(lineNumber: number, text: string, header: SheetHeader) {
    if (text.trim() === '') return;
    this.refuseLateHeader(lineNumber, text, header);
    // A cell over several lines whose closing quote text follows: the rows it took in would be read as a
    // note, and never said. (On one line, such a cell is read leniently: it takes in no other row.)
    if (text.includes('\n') && closesOnText(text, header.delimiter)) {
      const last = lineNumber + text.split('\n').length - 1;
      this.add(
        lineNumber,
        `a quoted cell runs on to line ${last}, where a quote closes it with text after it: is a quote missing, or one inside the cell not doubled ("")? The lines it ran over are not read`,
      );
      return;
    }
    const cells = splitRecord(text, header.delimiter);
    if (!Array.isArray(cells)) {
      this.add(lineNumber, cells.problem);
      return;
    }
    const result = fromCells(cells, header);
    if (result !== undefined) this.add(lineNumber, result);
  }

  /**
   * A line below the first that names a petId column is a header out of place (a title row above it, two
   * sheets one after the other): the rows below it would be read by position, or by another header's
   * columns, and set other pets. Refused before anything is sent; the same header again is a bad row.
   */
  private refuseLateHeader(lineNumber: number, line: string, current?: SheetHeader) {
    if (!LOOKS_LIKE_PET_ID.test(line)) return;
    const cells = splitRecord(line, current?.delimiter ?? findDelimiter(line));
    if (!Array.isArray(cells) || !cells.some((cell) => canonicalName(cell.trim()) === 'petid')) return;
    // A row of data (a number in it) that mentions petId in a note is no header.
    if (cells.some((cell) => /^\s*-?\d+\s*$/.test(cell))) return;
    if (current !== undefined) {
      let late: SheetHeader | undefined;
      try {
        late = readHeader(line, lineNumber, current.delimiter);
      } catch {
        // A header petinv would refuse is another header all the same.
      }
      if (
        late !== undefined &&
        late.petId === current.petId &&
        late.quantity === current.quantity &&
        late.from === current.from &&
        late.status === current.status
      )
        return;
    }
    throw usageError(
      `bulk input: line ${lineNumber} names its columns (a header), but it is not the first line, so the rows below it could be read as other pets' numbers; put the header on the first line (remove a title row above it), or apply each sheet on its own. Nothing was sent`,
    );
  }

  private add(line: number, result: ReadUpdate | string) {
    if (typeof result === 'string') this.problems.push({ line, message: result });
    else this.entries.push(line, result.petId, result.quantity, result.from, result.status);
  }

  private endJson(): BulkInput {
    const bytes = Buffer.concat(this.pending);
    this.pending = [];
    let items: unknown;
    try {
      items = parseInventoryJson(bytes.toString('utf8'));
    } catch (error) {
      return {
        entries: this.entries,
        problems: [{ line: 1, message: notJson(error) }],
        notices: this.notices,
        unit: 'item',
      };
    }
    if (!Array.isArray(items))
      return {
        entries: this.entries,
        problems: [{ line: 1, message: 'expected a JSON array' }],
        notices: this.notices,
        unit: 'item',
      };
    items.forEach((item, index) => {
      this.add(index + 1, fromObject(item));
    });
    this.entries.removeDuplicates('item', this.problems);
    this.problems.sort((a, b) => a.line - b.line);
    return { entries: this.entries, problems: this.problems, notices: this.notices, unit: 'item' };
  }
}

/** Reads bulk updates from a stream (stdin, a file) as they arrive; see BulkInputReader. */
export async function readBulkInput(source: AsyncIterable<Buffer | string>): Promise<BulkInput> {
  const reader = new BulkInputReader();
  for await (const chunk of asUtf8(source)) reader.push(chunk);
  return reader.end();
}

const UTF16_MARKS = [
  { mark: Buffer.from([0xff, 0xfe]), encoding: 'utf-16le' },
  { mark: Buffer.from([0xfe, 0xff]), encoding: 'utf-16be' },
] as const;

/**
 * The input as UTF-8. A spreadsheet's "Unicode text" is UTF-16 with its byte-order mark (Excel saves tab
 * separated UTF-16LE): it is decoded as it arrives. Anything else is passed on as it is.
 */
export async function* asUtf8(source: AsyncIterable<Buffer | string>): AsyncGenerator<Buffer> {
  let decoder: TextDecoder | undefined;
  let head: Buffer | undefined = Buffer.alloc(0);
  for await (const piece of source) {
    const chunk = typeof piece === 'string' ? Buffer.from(piece) : piece;
    if (head !== undefined) {
      head = Buffer.concat([head, chunk]);
      if (head.length < 2) continue;
      const utf16 = UTF16_MARKS.find(({ mark }) => head?.subarray(0, 2).equals(mark));
      // The decoder drops the mark itself (ignoreBOM is off).
      if (utf16) decoder = new TextDecoder(utf16.encoding);
      const first: Buffer = head;
      head = undefined;
      yield decoder ? Buffer.from(decoder.decode(first, { stream: true })) : first;
      continue;
    }
    yield decoder ? Buffer.from(decoder.decode(chunk, { stream: true })) : chunk;
  }
  if (head !== undefined && head.length > 0) yield head;
  if (decoder) {
    const rest = decoder.decode();
    if (rest !== '') yield Buffer.from(rest);
  }
}

/** The same for input already in memory (UTF-8). */
export function parseBulkInput(text: string): BulkInput {
  const reader = new BulkInputReader();
  reader.push(Buffer.from(text));
  return reader.end();
}
