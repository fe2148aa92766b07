import { readFileSync } from 'node:fs';
import { expect } from 'vitest';

/**
 * The lines of the journal beside data file `dataPath`: the text before the zeros laid down ahead of the
 * appends. Whatever follows them must be zeros only, or a torn write was left where the next one lands.
 */
export function readJournal(dataPath: string): string {
  const bytes = readFileSync(`${dataPath}.journal`);
  const firstZero = bytes.indexOf(0);
  if (firstZero === -1) return bytes.toString('utf8');
  const strayBytes = bytes.subarray(firstZero).filter((byte) => byte !== 0).length;
  expect(strayBytes, 'bytes after the zeros').toBe(0);
  return bytes.toString('utf8', 0, firstZero);
}
