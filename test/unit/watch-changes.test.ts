import { describe, expect, it } from 'vitest';
import type { InventoryItem } from '../../src/contract/schemas';
import { changeJson, changesBetween, indexInventory } from '../../src/watch/changes';

const item = (
  petId: bigint,
  quantity: number,
  status: InventoryItem['status'] = 'available',
): InventoryItem => ({
  petId,
  quantity,
  status,
});

describe('changesBetween', () => {
  it('finds changed, new and removed pets, and a change of status alone', () => {
    const before = [item(1n, 5), item(2n, 3), item(3n, 9), item(4n, 1)];
    const after = [item(1n, 7), item(2n, 3), item(4n, 1, 'sold'), item(9223372036854775807n, 2)];
    expect(changesBetween(indexInventory(before), indexInventory(after), before, after)).toEqual([
      { petId: 1n, from: 5, to: 7, status: 'available' },
      { petId: 4n, from: 1, to: 1, status: 'sold' },
      { petId: 9223372036854775807n, from: null, to: 2, status: 'available' },
      { petId: 3n, from: 9, to: null, status: 'available' },
    ]);
  });

  it('tells only the changes of pets in the view before or after, not pets moved by others', () => {
    const before = [item(1n, 5), item(2n, 3), item(3n, 4)];
    const after = [item(1n, 9), item(2n, 3), item(3n, 2)];
    // A view of "at most 4", limited to one pet: pet 2 moves into it because pet 1 left, unchanged itself.
    const low = (items: InventoryItem[]) => items.filter((pet) => pet.quantity <= 4).slice(0, 1);
    expect(changesBetween(indexInventory(before), indexInventory(after), low(before), low(after))).toEqual(
      [],
    );
    const lowAll = (items: InventoryItem[]) => items.filter((pet) => pet.quantity <= 4);
    expect(
      changesBetween(indexInventory(before), indexInventory(after), lowAll(before), lowAll(after)),
    ).toEqual([{ petId: 3n, from: 4, to: 2, status: 'available' }]);
  });

  it('writes an event as one JSON line with the petId exact', () => {
    expect(
      changeJson(
        { petId: 9223372036854775807n, from: null, to: 2, status: 'sold' },
        new Date(Date.UTC(2026, 0, 2)),
      ),
    ).toBe(
      '{"petId":9223372036854775807,"from":null,"to":2,"status":"sold","at":"2026-01-02T00:00:00.000Z"}\n',
    );
  });
});
