/**
 * petinv's own output is input for `petinv set --file` (see docs/stock-take.md). CSV names its columns in
 * its heading; TSV has none, and is read by position: `petId quantity`, `petId status quantity`, or a
 * plan's `petId from to found` (src/bulk/input.ts). A --fields order other than those would be read as
 * other pets' numbers, so TSV in such an order gets a heading line, as CSV has.
 */
const ORDERS_READ_BY_POSITION = new Set([
  'petId,quantity',
  'petId,status,quantity',
  'petId,to',
  'petId,from,to,found',
]);

/** Whether TSV of these --fields needs a heading line to be read back right. */
export function needsTsvHeading(fields: readonly string[] | undefined): boolean {
  if (fields === undefined) return false;
  // Without a petId and a quantity there is nothing to read back (set refuses it either way), and a
  // script's `get 42 --fields quantity` keeps its bare value.
  if (!fields.includes('petId') || (!fields.includes('quantity') && !fields.includes('to'))) return false;
  return !ORDERS_READ_BY_POSITION.has(fields.join(','));
}
