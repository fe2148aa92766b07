import { CsvError, Parser } from 'csv-parse';
import { usageError } from '../errors';
import { plural } from '../output/plural';
import { printable } from '../printable';
import type { Delimiter } from './sheet';

/**
 * The engine of csv-parse's stream reader (`api` on the instance, untyped), driven chunk by chunk so that
 * push() and end() stay synchronous. Its live `info.lines` is read: the `info` option doubled the time.
 */
export interface CsvEngine {
  parse(
    chunk: Buffer | undefined,
    end: boolean,
    push: (record: string[]) => void,
    close: () => void,
  ): Error | undefined;
  info: { lines: number };
}

/** A record (a row, whatever its line breaks) larger than this is refused: is a quote missing? */
const MAX_RECORD_BYTES = 1024 * 1024;

/** A CSV sheet's reader: RFC 4180 quotes, a line end of LF, CRLF or a CR alone, records bounded in size. */
export function csvEngine(delimiter: Exclude<Delimiter, 'space'>): CsvEngine {
  const parser = new Parser({
    delimiter,
    record_delimiter: ['\r\n', '\n', '\r'],
    relax_quotes: true,
    relax_column_count: true,
    max_record_size: MAX_RECORD_BYTES,
  });
  return (parser as unknown as { api: CsvEngine }).api;
}

/** What csv-parse stopped at: an unclosed quote is the next row's problem; anything else ends the run unsent. */
export function csvFailure(error: Error, next: { line: number; row: number }, headerLine: number): string {
  const code = error instanceof CsvError ? error.code : undefined;
  if (code === 'CSV_QUOTE_NOT_CLOSED') {
    const below = headerLine - 1 + ((error as { lines?: number }).lines ?? 0) - next.line;
    const taken =
      below <= 0
        ? ''
        : `, so the ${plural(below, 'line')} below it ${below === 1 ? 'was' : 'were'} read into its cell, not as rows`;
    return `a quote opened in this row is never closed${taken}`;
  }
  if (code === 'CSV_MAX_RECORD_SIZE')
    throw usageError(
      `bulk input: row ${next.row} runs on for more than ${MAX_RECORD_BYTES / 2 ** 20} MiB; is a quote missing? Nothing was sent`,
    );
  throw usageError(`bulk input: not valid CSV: ${printable(error.message, 120)}`);
}
