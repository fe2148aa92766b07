import { readFileSync } from 'node:fs';
import { expect } from 'vitest';

/**
 * The lines of the journal beside data file `dataPath`: the text before the zeros laid down ahead of the
 * appends. Whatever follows them must be zeros only, or a torn write was left where the next one lands.
 */
export function readJournal(dataPath: string): string {
  const text = readFileSync(`${dataPath}.journal`, 'latin1');
  const firstZero = text.indexOf('\0');
  if (firstZero === -1) return Buffer.from(text, 'latin1').toString('utf8');
  expect(text.slice(firstZero).replaceAll('\0', ''), 'bytes after the zeros').toBe('');
  return Buffer.from(text.slice(0, firstZero), 'latin1').toString('utf8');
}
