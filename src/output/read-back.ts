/**
 * petinv's own output is input for `set --file`. TSV without a heading is read by position (these orders,
 * src/bulk/rows.ts): any other --fields order would be read as other pets' numbers, so it gets a heading.
 */
const ORDERS_READ_BY_POSITION = new Set([
  'petId,quantity',
  'petId,status,quantity',
  'petId,to',
  'petId,from,to,found',
]);

export function needsTsvHeading(fields: readonly string[] | undefined): boolean {
  if (fields === undefined) return false;
  // Without petId and quantity nothing can be read back, and `get 42 --fields quantity` keeps its bare value.
  if (!fields.includes('petId') || (!fields.includes('quantity') && !fields.includes('to'))) return false;
  return !ORDERS_READ_BY_POSITION.has(fields.join(','));
}
