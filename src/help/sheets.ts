/**
 * What `petinv set --help` says about sheets, below its options: which columns are read. The formats
 * topic (topics.ts) and docs/stock-take.md say the same at length.
 */
export const SET_SHEET_HELP = `
Sheets (--file F, or - for stdin): CSV or TSV whose first line names the
columns. The delimiter (comma, tab or semicolon) is found from that line;
RFC 4180 quotes, CRLF and a BOM are read. Columns by name, in any order and
case, spaces, underscores and dashes ignored (PET ID and pet_id are petId):
  petId            the pet (required)
  quantity or to   the quantity to set (required; to is a plan's name for it)
  from             write only while the pet still holds this quantity, else
                   the row is a conflict (exit 11; --force writes it)
  status           compared with the service's; never written
Other columns are ignored, named in a notice. A header without petId or
quantity is refused before anything is sent. Rows of empty cells are
ignored; a bad row is skipped (--strict: nothing is sent). Only rows that
change a quantity are sent (--all: every row). --dry-run -o csv|tsv|json|ndjson
prints a plan (petId,from,to,found) that set --file applies exactly. Every
run is recorded: petinv history, petinv undo. Headerless "petId quantity"
lines, NDJSON and JSON arrays are read too. See petinv help formats.`;
