import { describe, expect, it } from 'vitest';
import { parseBulkInput } from '../../src/bulk/input';

const entries = (text: string) =>
  parseBulkInput(text).entries.map(({ petId, quantity }) => [petId, quantity]);

describe('parseBulkInput', () => {
  it('reads "petId quantity" split by spaces, commas or tabs, skipping blanks and comments', () => {
    expect(entries('# counts\n1 5\n2,6\n\n3\t7\n4 ,  8\n')).toEqual([
      [1n, 5],
      [2n, 6],
      [3n, 7],
      [4n, 8],
    ]);
  });
  it('reads what petinv list prints piped or as CSV', () => {
    expect(entries('1\tavailable\t5\n2\tsold\t0\n')).toEqual([
      [1n, 5],
      [2n, 0],
    ]);
    expect(entries('petId,status,quantity\n1,available,5\n')).toEqual([[1n, 5]]);
  });
  it('reads NDJSON and a JSON array, ignoring other fields, with int64 petIds exact', () => {
    expect(
      entries('{"petId":9223372036854775807,"quantity":1,"status":"sold"}\n{"petId":2,"quantity":3}\n'),
    ).toEqual([
      [9223372036854775807n, 1],
      [2n, 3],
    ]);
    expect(entries('[{"petId":9007199254740993,"quantity":0,"status":"sold"}]')).toEqual([
      [9007199254740993n, 0],
    ]);
  });
  it('reports each bad line with its number and keeps the good ones', () => {
    const input = parseBulkInput(
      '1 5\nx 5\n2 1.5\n3\n4 5 6\n{"petId":5}\n{bad\n6 9223372036854775808\n7 2\n',
    );
    expect(input.entries.map((entry) => entry.line)).toEqual([1, 9]);
    expect(input.problems).toEqual([
      { line: 2, message: 'petId "x" is not an integer within int64' },
      { line: 3, message: 'quantity "1.5" is not an integer' },
      { line: 4, message: 'expected "petId quantity", got 1 field' },
      { line: 5, message: 'expected "petId quantity", got 3 fields' },
      { line: 6, message: 'quantity: must be an integer' },
      { line: 7, message: expect.stringMatching(/^not valid JSON/) },
      { line: 8, message: 'quantity "9223372036854775808" is not an integer' },
    ]);
  });
  it('lets the later of two entries for one pet win, and says so', () => {
    const input = parseBulkInput('1 5\n2 6\n1 7\n');
    expect(input.entries.map(({ petId, quantity }) => [petId, quantity])).toEqual([
      [2n, 6],
      [1n, 7],
    ]);
    expect(input.problems).toEqual([{ line: 1, message: 'pet 1 appears again at line 3, which wins' }]);
  });
  it('numbers JSON array problems by item', () => {
    const input = parseBulkInput('[{"petId":1,"quantity":1},{"petId":"x","quantity":1}]');
    expect(input.unit).toBe('item');
    expect(input.problems).toEqual([{ line: 2, message: 'petId: must be an integer within int64' }]);
  });
});
