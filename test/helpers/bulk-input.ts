import { BulkInputReader } from '../../src/bulk/input';

/** Bulk input already in memory, read as petinv reads a stream of it. */
export function parseBulkInput(text: string) {
  const reader = new BulkInputReader();
  reader.push(Buffer.from(text));
  return reader.end();
}
