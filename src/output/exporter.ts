import { type JsonStyle, stringifyJson } from '../contract/json';
import { usageError } from '../errors';
import type { OutputChoice, OutputFormat } from './choose';
import { paint } from './terminal';

/**
 * Values out, one writer picks the format (as gh's Exporter does). Rows may come in batches: every format
 * but the table writes each at once, and only `end()` completes the output (the table, JSON's `]`), so
 * output that stops before it is visibly incomplete to a JSON reader.
 */

export interface Column<Row> {
  /** Its key in JSON, its heading in CSV, and its name for --fields. */
  key: string;
  heading: string;
  value(row: Row): bigint | number | string | boolean | null | { readonly [key: string]: unknown };
  /** Its text in the table, TSV and CSV, where that differs from its JSON value (`*` for `true`). */
  text?: (row: Row) => string;
  /** Its text never holds a tab, line break, backslash, comma or quote (the contract's statuses): TSV and CSV write it as it is. */
  plain?: true;
  /** A nested value (an item), in JSON and NDJSON only: the other formats neither show nor offer it. */
  jsonOnly?: true;
  align?: 'right';
  /** The table's least width for it, so that its layout does not jump with the data. */
  minWidth?: number;
  /** Colour for the table on a terminal, given the cell's text (padding stays outside the colour). */
  paint?: (text: string, row: Row, color: boolean) => string;
}

export interface ExportOptions<Row> extends Omit<OutputChoice, 'explicit'> {
  /** `one`: a single row, written as one object in JSON rather than an array of one. */
  shape?: 'list' | 'one';
  /** The table's last line, given every row (a summary such as "12 pets · 186 units"). */
  footer?: (rows: readonly Row[]) => string;
  /** TSV starts with a heading line of the keys too (unless --no-headers), as CSV does. */
  tsvHeading?: boolean;
}

export interface Exporter<Row> {
  /** The text for these rows, to be written now (the table keeps them for `end`). */
  rows(rows: readonly Row[]): string;
  end(): string;
}

/** The columns --fields names, in its order; an unknown name is a usage error listing the known ones. */
export function chooseColumns<Row>(
  allColumns: readonly Column<Row>[],
  fields?: readonly string[],
  format?: OutputFormat,
): Column<Row>[] {
  const json = format === 'json' || format === 'ndjson';
  const columns = json ? allColumns : allColumns.filter((column) => !column.jsonOnly);
  if (fields === undefined) return [...columns];
  return fields.map((field) => {
    const column = columns.find((candidate) => candidate.key === field);
    if (!column)
      throw usageError(
        `--fields: "${field}" is not a field here; choose from ${columns.map((c) => c.key).join(', ')}`,
      );
    return column;
  });
}

const csvCell = (text: string) => (/[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text);
const textOf = (value: ReturnType<Column<unknown>['value']>) => (value === null ? '' : String(value));
const cellText = <Row>(column: Column<Row>, row: Row) =>
  column.text ? column.text(row) : textOf(column.value(row));

/** One JSON document (a report object, say) as --json prints it: pretty on a terminal, one line in a pipe. */
export function jsonDocument(value: unknown, options: { pretty: boolean; color: boolean }): string {
  return `${stringifyJson(value, jsonStyle(options))}\n`;
}

/** All the rows at once, in the chosen format (what a command with a few rows prints). */
export function exportRows<Row>(
  columns: readonly Column<Row>[],
  options: ExportOptions<Row>,
  rows: readonly Row[],
): string {
  const exporter = createExporter(columns, options);
  return exporter.rows(rows) + exporter.end();
}

function jsonStyle(options: { pretty: boolean; color: boolean }): JsonStyle {
  if (!options.pretty) return {};
  if (!options.color) return { indent: 2 };
  const chalk = paint(true);
  return {
    indent: 2,
    paint: { key: chalk.blue, string: chalk.green, number: (text) => text, literal: chalk.yellow },
  };
}

export function createExporter<Row>(allColumns: readonly Column<Row>[], options: ExportOptions<Row>) {
  const columns = chooseColumns(allColumns, options.fields, options.format);
  switch (options.format) {
    case 'table':
      return tableExporter(columns, options);
    case 'tsv':
    case 'csv': {
      const [escapeText, separator] = options.format === 'csv' ? [csvCell, ','] : [tsvText, '\t'];
      const cells = columns.map((column) => escapedCell(column, escapeText));
      const headed = options.headers && (options.format === 'csv' || options.tsvHeading);
      const heading = headed ? `${columns.map((column) => escapeText(column.key)).join(separator)}\n` : '';
      return lines(joinCells(cells, separator), heading);
    }
    case 'ndjson':
      return lines(jsonRow(columns, {}));
    case 'json':
      return jsonExporter(columns, options);
  }
}

/*
 * The rows of a list of a million pets pass through the functions below: each line is built by one loop
 * over precomputed cell functions, with no array per row, which halves the exporter's time.
 */

/**
 * Text in a TSV cell: a tab or a line break would split the row, so they are written as `\t`, `\n` and
 * `\r`, and a backslash as `\\` (the text format of PostgreSQL's COPY and MySQL's batch output).
 */
function tsvText(text: string): string {
  return /[\t\n\r\\]/.test(text)
    ? text.replace(/[\t\n\r\\]/g, (char) => TSV_ESCAPES[char as keyof typeof TSV_ESCAPES])
    : text;
}
const TSV_ESCAPES = { '\t': '\\t', '\n': '\\n', '\r': '\\r', '\\': '\\\\' } as const;

/**
 * Text a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, a tab or CR first) gets a leading `'`, as
 * OWASP's advice on CSV injection says (issue 21). Only text passes through here: numbers stay numbers.
 */
export const defuseFormula = (text: string): string => (/^[=+\-@\t\r]/.test(text) ? `'${text}` : text);

/** A column's text in TSV or CSV, defused and escaped if it is text: the function chosen once, not per row. */
const escapedCell = <Row>(
  column: Column<Row>,
  escapeText: (text: string) => string,
): ((row: Row) => string) => {
  const { text } = column;
  if (column.plain) return text ?? ((row) => textOf(column.value(row)));
  if (text) return (row) => escapeText(defuseFormula(text(row)));
  return (row) => {
    const value = column.value(row);
    return typeof value === 'string' ? escapeText(defuseFormula(value)) : textOf(value);
  };
};

function joinCells<Row>(cells: readonly ((row: Row) => string)[], separator: string): (row: Row) => string {
  const count = cells.length;
  return (row) => {
    let text = count > 0 ? (cells[0] as (row: Row) => string)(row) : '';
    for (let index = 1; index < count; index++)
      text += separator + (cells[index] as (row: Row) => string)(row);
    return text;
  };
}

function jsonRow<Row>(columns: readonly Column<Row>[], style: JsonStyle, depth = 1): (row: Row) => string {
  if (style.indent) {
    return (row) =>
      stringifyJson(
        Object.fromEntries(columns.map((column) => [column.key, column.value(row)])),
        style,
        depth,
      );
  }
  const keys = columns.map((column, index) => `${index === 0 ? '{' : ','}${JSON.stringify(column.key)}:`);
  const count = columns.length;
  return (row) => {
    let text = '';
    for (let index = 0; index < count; index++)
      text += (keys[index] as string) + stringifyJson((columns[index] as Column<Row>).value(row));
    return `${text}}`;
  };
}

/** A line per row, after `heading` (written with the first rows, or at the end when there are none). */
function lines<Row>(line: (row: Row) => string, heading = ''): Exporter<Row> {
  let headed = false;
  const head = () => {
    if (headed) return '';
    headed = true;
    return heading;
  };
  return {
    rows(rows) {
      if (rows.length === 0) return '';
      let text = head();
      for (let index = 0; index < rows.length; index++) text += `${line(rows[index] as Row)}\n`;
      return text;
    },
    end: head,
  };
}

function jsonExporter<Row>(columns: readonly Column<Row>[], options: ExportOptions<Row>): Exporter<Row> {
  const style = jsonStyle(options);
  const row = jsonRow(columns, style);
  if (options.shape === 'one') {
    const one = jsonRow(columns, style, 0);
    let written = false;
    return {
      rows(rows) {
        if (rows.length === 0) return '';
        written = true;
        return `${one(rows[0] as Row)}\n`;
      },
      end: () => (written ? '' : 'null\n'),
    };
  }
  const separator = style.indent ? ',\n  ' : ',';
  let started = false;
  return {
    rows(rows) {
      if (rows.length === 0) return '';
      let text = started ? separator : style.indent ? '[\n  ' : '[';
      started = true;
      text += row(rows[0] as Row);
      for (let index = 1; index < rows.length; index++) text += separator + row(rows[index] as Row);
      return text;
    },
    end: () => (started ? (style.indent ? '\n]\n' : ']\n') : '[]\n'),
  };
}

/**
 * The terminal table. cli-table3 lays out a table in time quadratic in its rows (a 100,000-pet store
 * would take minutes), and these columns need no wrapping, so rows are padded here in one pass.
 */
function tableExporter<Row>(columns: readonly Column<Row>[], options: ExportOptions<Row>): Exporter<Row> {
  const kept: Row[] = [];
  return {
    rows(rows) {
      for (const row of rows) kept.push(row);
      return '';
    },
    end() {
      const chalk = paint(options.color);
      const cells = kept.map((row) => columns.map((column) => cellText(column, row)));
      const widths = columns.map((column, index) =>
        cells.reduce(
          (width, row) => Math.max(width, (row[index] as string).length),
          Math.max(column.minWidth ?? 0, options.headers ? column.heading.length : 0),
        ),
      );
      const last = columns.length - 1;
      const pad = (text: string, shown: string, index: number) => {
        const gap = ' '.repeat(Math.max((widths[index] as number) - text.length, 0));
        if (columns[index]?.align === 'right') return gap + shown;
        return index === last ? shown : shown + gap;
      };
      const lines: string[] = [];
      if (options.headers)
        lines.push(
          chalk.bold(columns.map((column, index) => pad(column.heading, column.heading, index)).join('  ')),
        );
      for (let at = 0; at < kept.length; at++) {
        const row = kept[at] as Row;
        lines.push(
          (cells[at] as string[])
            .map((text, index) => {
              const painter = columns[index]?.paint;
              return pad(text, painter ? painter(text, row, options.color) : text, index);
            })
            .join('  '),
        );
      }
      if (options.headers && options.footer) lines.push(chalk.dim(options.footer(kept)));
      return lines.length > 0 ? `${lines.join('\n')}\n` : '';
    },
  };
}
