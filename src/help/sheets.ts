/**
 * What `petinv set --help` says about sheets, below its options: which columns are read. The input
 * topic (topics.ts) and docs/stock-take.md say the same at length.
 */
export const SET_SHEET_HELP = `
Sheets (--file F, or -): CSV or TSV whose header names the columns, in any
order and case: petId, quantity (or to), from (write only while the pet still
holds it, else a conflict: exit 11), status (compared, never written). Only
rows that change a quantity are sent; every run is recorded for petinv undo.
Also "petId quantity" lines, NDJSON, JSON arrays: petinv help input.`;
