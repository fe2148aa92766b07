import { usageError } from '../errors';
import { plural } from '../output/plural';
import { type CsvEngine, csvEngine, csvFailure } from './csv';
import { checkWorkbook, SNIFF_BYTES, sniff, TextInputDecoder } from './decode';
import type { BulkInput } from './entries';
import {
  fromCells,
  fromFields,
  fromJsonLine,
  InputCollector,
  lateHeader,
  type ReadRow,
  readJsonArray,
  readsAsData,
} from './rows';
import { type Delimiter, delimiterLine, findDelimiter, readHeader, type SheetHeader } from './sheet';

export type { BulkEntry, BulkInput, BulkProblem } from './entries';

/** A line longer than this is a bad line: no update needs more than a few dozen bytes. */
export const MAX_LINE_BYTES = 64 * 1024;
/** A line still without its end after this much is not text input at all. */
export const MAX_UNENDED_LINE_BYTES = 1024 * 1024;
/** More lines than this in one run is refused, so that input that never ends stops. */
export const MAX_INPUT_LINES = 10_000_000;
/** A JSON array is parsed whole, so it is bounded like an answer from the service. */
export const MAX_JSON_INPUT_BYTES = 256 * 1024 * 1024;
/** A workbook is read whole; a million rows are about 20 MiB zipped. */
export const MAX_WORKBOOK_BYTES = 64 * 1024 * 1024;

/** A line end: LF, CRLF, or a CR alone (Excel for Mac's "CSV (Macintosh)"). */
const LINE_END = /\r\n?|\n/g;
const TOO_LONG = { problem: `longer than ${MAX_LINE_BYTES / 1024} KiB; one update needs a few dozen bytes` };

/**
 * Reads bulk input as it arrives (a sheet, headerless lines, NDJSON, or a JSON array read whole), so that
 * memory holds the entries, never the input. A CSV sheet goes to csv-parse; lines without a header are
 * split here, which a CSV reader does ten times slower. A zip is kept whole in `zip` (see xlsx.ts).
 */
export class BulkInputReader {
  private readonly rows = new InputCollector();
  private head: Buffer[] | undefined = [];
  private bytes = 0;
  private decoder?: TextInputDecoder;
  zip?: Buffer[];
  private mode: 'start' | 'json' | 'lines' | 'csv' = 'start';
  /** Before the input's kind is known, its text; in JSON mode, the array's. */
  private held: string[] = [];
  /** The text of a line not yet ended. */
  private carry = '';
  private lineNumber = 0;
  private unit: BulkInput['unit'] = 'line';
  private shape: 'start' | 'bare' | 'ndjson' | 'sheet' = 'start';
  private delimiter?: Delimiter;
  private header?: SheetHeader;
  /** The line a sheet's header is on (row 1), its rows counted from there. */
  private headerLine = 0;
  private csv?: CsvEngine;
  private last = { line: 0, row: 1 };

  constructor(private readonly maxLines = MAX_INPUT_LINES) {}

  push(chunk: Buffer) {
    this.bytes += chunk.length;
    if (this.zip) {
      this.zip.push(chunk);
      if (this.bytes > MAX_WORKBOOK_BYTES)
        throw usageError(
          `bulk input: a workbook larger than ${MAX_WORKBOOK_BYTES / 2 ** 20} MiB; save it as CSV, which is read as it arrives`,
        );
    } else if (this.head) {
      this.head.push(chunk);
      if (this.bytes >= SNIFF_BYTES) this.sniffHead();
    } else this.pushText((this.decoder as TextInputDecoder).decode(chunk));
  }

  end(): BulkInput {
    this.sniffHead();
    if (this.zip) {
      checkWorkbook(Buffer.concat(this.zip));
      throw usageError('bulk input: a workbook is read by readBulkInput, not from text');
    }
    this.pushText((this.decoder as TextInputDecoder).decode(Buffer.alloc(0), true), true);
    const notice = this.decoder?.notice;
    if (notice) this.rows.notices.unshift(notice);
    return this.mode === 'json' ? readJsonArray(this.held.join(''), this.rows) : this.rows.finish(this.unit);
  }

  /** Tells a zip (a workbook, perhaps) from text once the first bytes are in, and starts reading text. */
  sniffHead() {
    if (!this.head) return;
    const head = Buffer.concat(this.head as Buffer[]);
    this.head = undefined;
    if (sniff(head) === 'zip') this.zip = [head];
    else {
      this.decoder = new TextInputDecoder(head);
      this.pushText(this.decoder.decode(head));
    }
  }

  private pushText(text: string, end = false) {
    if (this.mode === 'csv') return this.parse(text, end);
    if (this.mode === 'lines') return this.split(text, end);
    this.held.push(text);
    if (this.mode === 'json') {
      if (this.bytes > MAX_JSON_INPUT_BYTES)
        throw usageError(
          `bulk input: a JSON array larger than ${MAX_JSON_INPUT_BYTES / 2 ** 20} MiB; split it, or give it as lines (NDJSON)`,
        );
      return;
    }
    // Before the first printable character: blank space, held until it says which kind of input this is.
    const held = this.held.join('');
    const first = held.search(/\S/);
    if (first === -1 && !end) {
      this.held = [held];
      if (held.length > MAX_UNENDED_LINE_BYTES)
        throw usageError(`bulk input: more than ${MAX_UNENDED_LINE_BYTES / 2 ** 20} MiB of blank space`);
      return;
    }
    this.mode = held[first] === '[' ? 'json' : 'lines';
    this.held = this.mode === 'json' ? [held] : [];
    if (this.mode === 'lines') this.split(held, end);
  }

  /** Lines, each handled as it ends; a CSV sheet's header hands the rest to csv-parse. */
  private split(text: string, end: boolean) {
    const data = this.carry + text;
    let start = 0;
    LINE_END.lastIndex = 0;
    for (let match = LINE_END.exec(data); match; match = LINE_END.exec(data)) {
      // A CR that ends the text may be half of a CRLF: the next chunk says.
      if (!end && match[0] === '\r' && match.index === data.length - 1) break;
      const lineStart = start;
      start = match.index + match[0].length;
      if (this.addLine(data.slice(lineStart, match.index)) === 'csv')
        return this.parse(data.slice(lineStart), end);
    }
    this.carry = data.slice(start);
    if (end && this.carry !== '') {
      const line = this.carry;
      this.carry = '';
      if (this.addLine(line) === 'csv') this.parse(line, true);
    } else if (this.carry.length > MAX_UNENDED_LINE_BYTES)
      throw usageError(
        `bulk input: ${this.lineNumber === 0 ? 'its first line' : `line ${this.lineNumber + 1}`} has no end within ${MAX_UNENDED_LINE_BYTES / 2 ** 20} MiB; is it text, one update a line?`,
      );
  }

  private addLine(text: string): 'csv' | undefined {
    const line = ++this.lineNumber;
    if (line > this.maxLines) throw this.tooManyLines();
    const where = this.shape === 'sheet' ? line - this.headerLine + 1 : line;
    if (text.length > MAX_LINE_BYTES) return void this.rows.add(where, TOO_LONG);
    const trimmed = text.trim();
    // A sheet split on spaces (`petId quantity` as its header): its rows are read here too. An empty cell
    // there is no cell at all, and the cells after it would be read as the columns before them.
    if (this.shape === 'sheet') {
      const cells = trimmed.split(/[ \t]+/);
      const width = (this.header as SheetHeader).names.length;
      return void this.rows.add(
        where,
        trimmed !== '' && cells.length < width
          ? {
              problem: `${plural(cells.length, 'value')} for ${width} columns split by spaces: an empty cell cannot be told from the next; fill every cell, or separate the columns with commas or tabs`,
            }
          : this.sheetRow(cells, where),
      );
    }
    if (/^[\s,;]*$/.test(trimmed)) return;
    if (this.shape === 'start') {
      const begun = this.begin(trimmed, line);
      if (begun !== 'data') return begun;
    }
    if (trimmed.startsWith('#')) return;
    // NDJSON holds a JSON object a line: a line of fields there is not read by position.
    if (this.shape === 'ndjson' || trimmed.startsWith('{'))
      return void this.rows.add(line, fromJsonLine(trimmed, this.rows.jsonKeys));
    const fields = trimmed.split(/[\s,]+/);
    this.rows.add(line, lateHeader(fields, `line ${line}`) ?? fromFields(fields));
  }

  /**
   * The first line that is not blank, a comment or Excel's `sep=;` decides: one that reads as data starts
   * headerless lines; any other is a sheet's header, read by its names or refused (never taken for data).
   */
  private begin(line: string, lineNumber: number): 'csv' | 'data' | undefined {
    const said = this.delimiter === undefined ? delimiterLine(line) : undefined;
    if (said) this.delimiter = said;
    if (said || /^#(?![,;\t])/.test(line)) return;
    if (readsAsData(line)) {
      this.shape = line.startsWith('{') ? 'ndjson' : 'bare';
      return 'data';
    }
    this.shape = 'sheet';
    this.unit = 'row';
    this.headerLine = lineNumber;
    const delimiter = this.delimiter ?? findDelimiter(line);
    this.delimiter = delimiter;
    if (delimiter === 'space') return void this.setHeader(readHeader(line.split(/[ \t]+/), delimiter));
    this.csv = csvEngine(delimiter);
    this.mode = 'csv';
    return 'csv';
  }

  private tooManyLines() {
    return usageError(
      `bulk input: more than ${this.maxLines.toLocaleString('en-US')} lines; split it into several runs`,
    );
  }

  private setHeader(header: SheetHeader) {
    this.header = header;
    this.rows.useHeader(header);
  }

  /** Text for csv-parse: each record a row (the header row 1), however many lines its cells span. */
  private parse(text: string, end = false) {
    const csv = this.csv as CsvEngine;
    const records: { cells: string[]; line: number }[] = [];
    const error = csv.parse(
      Buffer.from(text),
      end,
      (cells) => records.push({ cells, line: this.headerLine - 1 + csv.info.lines }),
      () => {},
    );
    for (const { cells, line } of records) {
      if (line > this.maxLines) throw this.tooManyLines();
      const row = this.header ? this.last.row + 1 : 1;
      this.last = { line, row };
      if (!this.header) this.setHeader(readHeader(cells, this.delimiter as Delimiter));
      else this.rows.add(row, this.sheetRow(cells, row));
    }
    if (error) {
      const next = { line: this.last.line + 1, row: this.last.row + 1 };
      this.rows.add(next.row, { problem: csvFailure(error, next, this.headerLine) });
    }
  }

  private sheetRow(cells: string[], row: number): ReadRow {
    if (cells.some((cell) => cell.length > MAX_LINE_BYTES)) return TOO_LONG;
    // relax_quotes keeps a cell's opening quote when a quote closes it with text after it: over several
    // lines, the rows it ran over would be read as a note, unsaid.
    if (cells.some((cell) => cell.startsWith('"') && /[\r\n]/.test(cell)))
      return {
        problem: `a quoted cell runs on over the lines below it, where a quote closes it with text after it: is a quote missing, or one inside the cell not doubled ("")? The lines it ran over are not read as rows`,
      };
    return lateHeader(cells, `row ${row}`, this.header) ?? fromCells(cells, this.header as SheetHeader);
  }
}

/** Reads bulk updates from a stream (stdin, a file) as they arrive; see BulkInputReader. A workbook is read whole. */
export async function readBulkInput(source: AsyncIterable<Buffer | string>): Promise<BulkInput> {
  const reader = new BulkInputReader();
  for await (const chunk of source) reader.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  reader.sniffHead();
  if (!reader.zip) return reader.end();
  const workbook = checkWorkbook(Buffer.concat(reader.zip));
  const { readWorkbook } = await import('./xlsx');
  return readWorkbook(workbook);
}
