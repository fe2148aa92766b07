import { COLUMN_NAMES } from '../bulk/sheet';

/** What petinv says about sheets: below `petinv set --help`'s options, and at length in `petinv help input`. */
export const SET_SHEET_HELP = `
Sheets: as petinv list --count-sheet writes them, columns named in any order or
language: the pet, counted (or quantity; empty: not counted), expected (or from:
written only while the pet holds it, else a conflict, exit 11). Only rows that
change a quantity are sent; each run is recorded for undo. petinv help input.`;

const names = (role: keyof typeof COLUMN_NAMES) => COLUMN_NAMES[role].map((name) => `\`${name}\``).join(', ');

export const INPUT_TOPIC = {
  name: 'input',
  summary: 'what set --file F and set - read',
  manSection: 'BULK INPUT',
  blocks: [
    {
      paragraph:
        'Bulk input (`set --file F`, `set -`): a sheet (CSV, TSV or an .xlsx workbook), lines `petId quantity` (also `petId status quantity` and `petId from to found`, as `list` prints them in a pipe and a dry run with `-o tsv`), NDJSON items, or a JSON array. The first line that is not blank or a `#` comment is data only if every field reads as a number (or a status, or true or false); anything else is a header, read by its names or refused (exit 2), never read as data.',
    },
    {
      paragraph:
        'Columns are found by name in any order, ignoring case, accents, spaces and punctuation (`Pet #` is `pet`, `N°` is `n`). Other columns are named in a notice; a row with another number than its count (or a number and no count) in a column whose name says it holds counts too (`Recount`, `Anzahl 2`) is a bad row, and such a column beside the count with no expected column (`Stock`, `Physical`) is refused; an expected quantity in other words (`Quantité attendue`, `Soll-Bestand`) is expected. JSON keys are read as column names are. An empty counted cell sends nothing and is counted as not counted. A bad row names its spreadsheet row (the header is row 1) and its pet, and is skipped (`--strict`: nothing is sent).',
    },
    {
      table: {
        head: ['column', 'names'],
        rows: [
          ['the pet (required)', names('petId')],
          ['counted: the quantity to set (required)', names('counted')],
          ['expected: at export; else a conflict, exit 11', names('expected')],
          ['status: compared, never written', names('status')],
        ],
      },
    },
    {
      paragraph:
        "CSV is read with RFC 4180 quoting; the delimiter is the one the header uses most, or Excel's `sep=;`. Text is UTF-8, UTF-16 with its byte-order mark, or else Windows-1252 (Mac Roman with lines ended by CR alone; a notice says which). An .xlsx is read by its first sheet; other binary files are refused. `--dry-run -o csv` prints a plan, `petId,from,to,found`, which `set --file` applies exactly. See docs/stock-take.md.",
    },
  ],
};
