import { usageError } from '../errors';
import { readShortGroup } from '../short-options';
import type { CommandContext } from './context';

/**
 * What -o takes (its declaration in src/program/global-options.ts). This module stays light: the program
 * loads it at every start. xlsx: a workbook, which only `list --count-sheet` writes (output/count-sheet.ts).
 */
export const OUTPUT_FORMATS = ['table', 'tsv', 'csv', 'json', 'ndjson', 'xlsx'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** `--fields petId,quantity`: names, in order; each command checks them against its own columns. */
export function parseFields(text: string, flag: string): string[] {
  const fields = text.split(',').map((field) => field.trim());
  if (fields.some((field) => field === ''))
    throw usageError(`${flag} ${text}: must be names separated by commas`);
  return fields;
}

/** The value of -o in a word of short options (`-o`, `-ojson`, `-o=json`, `-vo`): '' for the next word's. */
function shortOutputValue(word: string): string | undefined {
  // -e takes the rest of the word as its value, so an o after it is part of that value.
  const { valued } = readShortGroup(word, (flag) => flag === '-o' || flag === '-e') ?? {};
  return valued?.flag === '-o' ? valued.rest.replace(/^=/, '') : undefined;
}

/** Whether a command line asks for JSON (`--json`, `-o json`): its failures are then JSON too. */
export function asksForJson(argv: readonly string[]): boolean {
  // The last -o or --output is the one in effect, as commander reads them; --json asks for JSON whatever.
  let output: string | undefined;
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index] as string;
    if (arg === '--') break;
    if (arg === '--json') return true;
    const short = shortOutputValue(arg);
    if (arg.startsWith('--output=')) output = arg.slice('--output='.length);
    else if (short === '' || arg === '--output') output = argv[++index];
    else if (short !== undefined) output = short;
  }
  return output === 'json';
}

/** The output options every command that prints data shares (declared once in src/program/build.ts). */
export type OutputFlags = { output?: OutputFormat; json?: boolean; fields?: string[]; headers?: boolean };

export interface OutputChoice {
  format: Exclude<OutputFormat, 'xlsx'>;
  /** --fields: column keys, in the order wanted; all columns when undefined. */
  fields?: readonly string[];
  /** The heading line of the table and CSV (and the table's footer); --no-headers turns it off. */
  headers: boolean;
  color: boolean;
  /** JSON for a person: indented (and coloured) on a terminal, compact in a pipe. */
  pretty: boolean;
  /**
   * Whether the command line asked for a shape (-o, a shorthand, --fields or --no-headers): a command with
   * a view of its own for people (summary's chart, `42: 7 → 12`) prints that view only when none was.
   */
  explicit: boolean;
}

/**
 * The format a command writes in: `-o` or one of its shorthands (`--json`, list's `--csv`), else a table
 * on a terminal and TSV in a pipe. Two that disagree are a usage error, not a guess.
 */
export function chooseOutput(
  flags: OutputFlags,
  context: CommandContext,
  shorthands: ReadonlyArray<readonly [given: boolean | undefined, format: OutputFormat, flag: string]> = [],
): OutputChoice {
  const given = [
    ...(flags.output ? [[flags.output, `-o ${flags.output}`] as const] : []),
    ...(flags.json ? [['json', '--json'] as const] : []),
    ...shorthands.filter(([on]) => on).map(([, format, flag]) => [format, flag] as const),
  ];
  const formats = new Set(given.map(([format]) => format));
  if (formats.size > 1) throw usageError(`choose one of ${given.map(([, flag]) => flag).join(', ')}`);
  const format = given[0]?.[0] ?? (context.stdout.isTTY ? 'table' : 'tsv');
  if (format === 'xlsx') throw usageError('-o xlsx: only petinv list --count-sheet writes a workbook');
  return {
    format,
    fields: flags.fields,
    headers: flags.headers !== false,
    color: context.color,
    pretty: context.stdout.isTTY === true,
    explicit: given.length > 0 || flags.fields !== undefined || flags.headers === false,
  };
}

/**
 * Refuses --fields where the JSON has a documented shape of its own (a report object, a bulk result)
 * rather than one object per row: a usage error, before anything is sent.
 */
export function refuseFieldsInJson(
  output: OutputChoice,
  what: string,
  shaped: readonly OutputFormat[] = ['json'],
): void {
  if (output.fields !== undefined && shaped.includes(output.format))
    throw usageError(
      `--fields does not apply to ${what} in ${output.format}, which has a shape of its own (see petinv help rows)`,
    );
}
