import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import { scanJournal } from '../../src/server/journal-format';

/**
 * The changes in the journal beside data file `dataPath`, one `{"petId":…,"quantity":…}` line each, in
 * the order committed. Every byte after the header must belong to a checked commit: a torn or refused
 * write left where the next one lands fails the test.
 */
export function readJournal(dataPath: string): string {
  const scan = scanJournal(readFileSync(`${dataPath}.journal`));
  if (scan.format === 'empty') return '';
  expect(scan.format, 'journal format').toBe('checked');
  if (scan.format !== 'checked') return '';
  expect(scan.damage, 'bytes after the last sound commit').toBeUndefined();
  return scan.commits
    .flatMap((commit) => commit.changes)
    .map((change) => `{"petId":${change.petId},"quantity":${change.quantity}}\n`)
    .join('');
}

/** The commits of that journal, each as the petIds and quantities it changed. */
export function readCommits(dataPath: string): [number, number][][] {
  const scan = scanJournal(readFileSync(`${dataPath}.journal`));
  if (scan.format !== 'checked') return [];
  return scan.commits.map((commit) =>
    commit.changes.map((change) => [Number(change.petId), change.quantity] as [number, number]),
  );
}
