import { describe, expect, it } from 'vitest';
import { parseInventoryJson, readCanonicalItem, serializeItem } from '../../src/contract/json';
import { InventoryItemResponse } from '../../src/contract/schemas';

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

  it('refuses a key written twice in one object, and reads an escaped key as the key it is', () => {
    for (const text of [
      '{"petId":9007199254740993,"petId":9007199254740992}',
      '{"quantity":1,"quantity":2}',
      '{"status":"sold","s\\u0074atus":"sold"}',
      '[{"petId":1,"x":{"a":1,"a":1}}]',
    ]) {
      expect(() => parseInventoryJson(text), text).toThrow(/is written twice in one object/);
    }
    expect(parseInventoryJson('{"pet\\u0049d":9007199254740993}')).toEqual({ petId: 9007199254740993n });
    expect(parseInventoryJson('[{"a":1},{"a":2}]')).toEqual([{ a: 1 }, { a: 2 }]);
  });

  it('pairs each number with its own digits whatever the key order (integer-like keys are listed first)', () => {
    const item = parseInventoryJson(
      '{"petId":9007199254740993,"quantity":1,"status":"sold","0":{"petId":9007199254740992,"quantity":1}}',
    ) as Record<string, unknown>;
    expect(item.petId).toBe(9007199254740993n);
    expect(item[0]).toEqual({ petId: 9007199254740992n, quantity: 1 });
  });

  it('keeps "__proto__" an own key, as JSON.parse does, and refuses a document nested too deeply', () => {
    const value = parseInventoryJson('{"__proto__":{"petId":1}}') as object;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.hasOwn(value, '__proto__')).toBe(true);
    expect(() => parseInventoryJson(`${'['.repeat(200_000)}${']'.repeat(200_000)}`)).toThrow(SyntaxError);
  });

  it('is still JSON.parse for everything else, errors included', () => {
    expect(parseInventoryJson('{"a":[1,2.5,{"b":null}],"c":"\\"petId\\":1"}')).toEqual({
      a: [1, 2.5, { b: null }],
      c: '"petId":1',
    });
    expect(() => parseInventoryJson('{bad')).toThrow(SyntaxError);
  });
});

describe('readCanonicalItem', () => {
  const general = (text: string) => {
    try {
      const parsed = InventoryItemResponse.safeParse(parseInventoryJson(text));
      return parsed.success ? parsed.data : undefined;
    } catch {
      return undefined;
    }
  };

  it('reads the wire form serializeItem writes, as the general path does', () => {
    for (const item of [
      { petId: 42n, quantity: 7, status: 'sold' as const },
      { petId: 9223372036854775807n, quantity: 9007199254740991, status: 'available' as const },
      { petId: -9223372036854775808n, quantity: -9007199254740991, status: 'pending' as const },
      { petId: 0n, quantity: 0, status: 'sold' as const },
    ]) {
      const text = serializeItem(item);
      expect(readCanonicalItem(text)).toEqual(item);
      expect(readCanonicalItem(text)).toEqual(general(text));
    }
  });

  it('leaves everything else to the general path: other forms, and values the contract refuses', () => {
    for (const text of [
      '{"petId":9223372036854775808,"quantity":1,"status":"sold"}', // past int64
      '{"petId":1,"quantity":9007199254740993,"status":"sold"}', // a double cannot hold it
      '{"petId":1,"quantity":1,"status":"lost"}',
      '{"petId":01,"quantity":1,"status":"sold"}', // not JSON
      '{"petId":1.0,"quantity":1,"status":"sold"}',
      '{"petId":"1","quantity":1,"status":"sold"}',
      '{"petId":1,"quantity":1,"status":"sold","extra":true}',
      '{"quantity":1,"petId":1,"status":"sold"}',
      ' {"petId":1,"quantity":1,"status":"sold"}',
      '{"petId":1,"quantity":1,"status":"sold"}\n',
    ]) {
      expect(readCanonicalItem(text), text).toBeUndefined();
    }
    // Those the contract accepts in another form still come out the same through the general path.
    expect(general('{"quantity":1,"petId":1,"status":"sold"}')).toEqual({
      petId: 1n,
      quantity: 1,
      status: 'sold',
    });
  });
});
