import { describe, expect, it } from 'vitest';
import { parseInventoryJson } from '../../src/api/json';

describe('parseInventoryJson: exact int64 petIds without copying the text', () => {
  it('reads petIds as bigints from their digits, in arrays, objects and nested lists', () => {
    expect(
      parseInventoryJson(
        '[{"petId":9223372036854775807,"quantity":1,"status":"sold"},{"status":"sold","quantity":2,"petId" : -9007199254740993}]',
      ),
    ).toEqual([
      { petId: 9223372036854775807n, quantity: 1, status: 'sold' },
      { petId: -9007199254740993n, quantity: 2, status: 'sold' },
    ]);
    expect(parseInventoryJson('{"format":"f","items":[{"petId":9007199254740993,"quantity":0}]}')).toEqual({
      format: 'f',
      items: [{ petId: 9007199254740993n, quantity: 0 }],
    });
  });

  it('leaves a petId or quantity that is not a JSON integer as its text, for the schemas to refuse', () => {
    expect(parseInventoryJson('{"petId":5.0,"quantity":5e0}')).toEqual({ petId: '5.0', quantity: '5e0' });
    expect(parseInventoryJson('{"petId":"5","quantity":"7"}')).toEqual({ petId: '5', quantity: '7' });
  });

  it('refuses keys it cannot pair with their text exactly instead of guessing', () => {
    for (const text of [
      '{"petId":9007199254740993,"petId":9007199254740992}',
      '{"pet\\u0049d":9007199254740993}',
      '{"quantity":1,"quantity":2}',
    ]) {
      expect(() => parseInventoryJson(text), text).toThrow(/written twice or with escapes/);
    }
  });

  it('is still JSON.parse for everything else, errors included', () => {
    expect(parseInventoryJson('{"a":[1,2.5,{"b":null}],"c":"\\"petId\\":1"}')).toEqual({
      a: [1, 2.5, { b: null }],
      c: '"petId":1',
    });
    expect(() => parseInventoryJson('{bad')).toThrow(SyntaxError);
  });
});
