import { describe, expect, it } from 'vitest';
import { plural } from '../../src/output/plural';

describe('plural', () => {
  it.each([
    [0, 'pet', '0 pets'],
    [1, 'pet', '1 pet'],
    [2, 'bad line', '2 bad lines'],
    [1n, 'unit', '1 unit'],
    [9007199254740993n, 'unit', '9007199254740993 units'],
  ] as const)('%s %s is %s', (count, noun, expected) => {
    expect(plural(count, noun)).toBe(expected);
  });
});
