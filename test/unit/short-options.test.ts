import { describe, expect, it } from 'vitest';
import { readShortGroup } from '../../src/short-options';

/** Short options written together, read as commander reads them (src/short-options.ts). */
const TAKES_VALUE = new Map([
  ['-o', true],
  ['-e', true],
  ['-v', false],
  ['-h', false],
]);
const read = (word: string) => readShortGroup(word, (flag) => TAKES_VALUE.get(flag));

describe('readShortGroup', () => {
  it.each([
    ['-v', { flags: ['-v'] }],
    ['-vh', { flags: ['-v', '-h'] }],
    ['-o', { flags: [], valued: { flag: '-o', rest: '' } }],
    ['-vo', { flags: ['-v'], valued: { flag: '-o', rest: '' } }],
    ['-vojson', { flags: ['-v'], valued: { flag: '-o', rest: 'json' } }],
    ['-vo=json', { flags: ['-v'], valued: { flag: '-o', rest: '=json' } }],
    // The e takes the rest of the word: the o in it is part of its value.
    ['-velocal', { flags: ['-v'], valued: { flag: '-e', rest: 'local' } }],
    ['-vqo', { flags: ['-v'], unknown: '-q' }],
  ])('%s', (word, group) => {
    expect(read(word)).toEqual(group);
  });

  it.each(['--env', '-', 'list', ''])('%j is no group of short options', (word) => {
    expect(read(word)).toBeUndefined();
  });
});
