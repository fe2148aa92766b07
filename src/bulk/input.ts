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

export type { BulkEntries, BulkEntry, BulkProblem } from './entries';

export interface BulkInput {
  entries: BulkEntries;
  problems: BulkProblem[];
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

/** One update in any of the accepted shapes; other fields (status, from `petinv list --json`) are ignored. */
const UpdateObject = z.object({ petId: PetId, quantity: QuantityValue });

const STATUSES = new Set<string>(PET_STATUSES);
const NEWLINE = 0x0a;
const BYTE_ORDER_MARK = Buffer.from([0xef, 0xbb, 0xbf]);

/** An echoed piece of input, short and printable, quoted. */
const quoted = (text: string) => `"${printable(text, 40)}"`;

function fromFields(fields: string[]): Omit<BulkEntry, 'line'> | string {
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
  return { petId, quantity };
}

function fromObject(raw: unknown): Omit<BulkEntry, 'line'> | string {
  const parsed = UpdateObject.safeParse(raw);
  return parsed.success ? parsed.data : describeIssues(parsed.error);
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
    let start = 0;
    for (;;) {
      const end = data.indexOf(NEWLINE, start);
      if (end === -1) break;
      this.keep(data.subarray(start, end));
      this.endLine();
      start = end + 1;
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
    this.entries.removeDuplicates('line', this.problems);
    this.problems.sort((a, b) => a.line - b.line);
    return { entries: this.entries, problems: this.problems, unit: 'line' };
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
      this.problems.push({
        line: this.lineNumber,
        message: `longer than ${MAX_LINE_BYTES / 1024} KiB; one update needs a few dozen bytes`,
      });
      return;
    }
    // A line ends at a newline byte, which never stands inside a UTF-8 sequence: each decodes alone.
    this.addLine(this.lineNumber, bytes.toString('utf8'));
  }

  private addLine(lineNumber: number, rawLine: string) {
    const line = rawLine.trim();
    if (line === '' || line.startsWith('#')) return;
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
    const fields = line.split(/[\s,]+/);
    // A header such as `petinv list --csv` prints.
    if (lineNumber === 1 && fields[0]?.toLowerCase() === 'petid') return;
    this.add(lineNumber, fromFields(fields));
  }

  private add(line: number, result: Omit<BulkEntry, 'line'> | string) {
    if (typeof result === 'string') this.problems.push({ line, message: result });
    else this.entries.push(line, result.petId, result.quantity);
  }

  private endJson(): BulkInput {
    const bytes = Buffer.concat(this.pending);
    this.pending = [];
    let items: unknown;
    try {
      items = parseInventoryJson(bytes.toString('utf8'));
    } catch (error) {
      return { entries: this.entries, problems: [{ line: 1, message: notJson(error) }], unit: 'item' };
    }
    if (!Array.isArray(items))
      return {
        entries: this.entries,
        problems: [{ line: 1, message: 'expected a JSON array' }],
        unit: 'item',
      };
    items.forEach((item, index) => {
      this.add(index + 1, fromObject(item));
    });
    this.entries.removeDuplicates('item', this.problems);
    this.problems.sort((a, b) => a.line - b.line);
    return { entries: this.entries, problems: this.problems, unit: 'item' };
  }
}

/** Reads bulk updates from a stream (stdin, a file) as they arrive; see BulkInputReader. */
export async function readBulkInput(source: AsyncIterable<Buffer | string>): Promise<BulkInput> {
  const reader = new BulkInputReader();
  for await (const chunk of source) reader.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return reader.end();
}

/** The same for input already in memory. */
export function parseBulkInput(text: string): BulkInput {
  const reader = new BulkInputReader();
  reader.push(Buffer.from(text));
  return reader.end();
}
