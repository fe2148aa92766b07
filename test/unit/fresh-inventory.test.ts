import { describe, expect, it } from 'vitest';
import { CHECK_WINDOW_MS, FreshInventory } from '../../src/bulk/fresh';
import type { InventoryPoll } from '../../src/client/client';

/** FreshInventory on a clock the test moves, against a poll that answers as told. */
function fresh(answers: (() => Promise<InventoryPoll>)[]) {
  const clock = { now: 0 };
  const etags: (string | undefined)[] = [];
  const inventory = new FreshInventory(
    {
      pollInventory: (etag) => {
        etags.push(etag);
        const next = answers.shift();
        if (!next) throw new Error('read more often than the test expected');
        return next();
      },
    },
    { items: [{ petId: 1n, quantity: 5, status: 'available' }], sentAt: 0 },
    async () => {},
    () => clock.now,
  );
  return { inventory, clock, etags };
}

const changedTo = (quantity: number, etag: string) => async (): Promise<InventoryPoll> => ({
  changed: true,
  items: [{ petId: 1n, quantity, status: 'available' }],
  etag,
});

describe('FreshInventory: what a write is checked against', () => {
  it('is read again before a write once three quarters of the window passed; a 304 keeps what it has', async () => {
    const { inventory, clock, etags } = fresh([changedTo(6, '"a"'), async () => ({ changed: false })]);
    clock.now = CHECK_WINDOW_MS * 0.75;
    expect((await inventory.current()).get(1n)?.quantity).toBe(5);
    expect(etags).toEqual([]);
    clock.now = CHECK_WINDOW_MS * 0.75 + 1;
    expect((await inventory.current()).get(1n)?.quantity).toBe(6);
    expect(etags).toEqual([undefined]);
    clock.now = CHECK_WINDOW_MS * 1.5 + 2;
    expect((await inventory.current()).get(1n)?.quantity).toBe(6);
    expect(etags).toEqual([undefined, '"a"']);
  });

  it('a read that fails fails the write that waits for it, and the next write reads again', async () => {
    const { inventory, clock } = fresh([
      async () => {
        throw new Error('gone');
      },
      changedTo(9, '"b"'),
    ]);
    clock.now = CHECK_WINDOW_MS * 2;
    await expect(inventory.current()).rejects.toThrow('gone');
    expect((await inventory.current()).get(1n)?.quantity).toBe(9);
  });
});
