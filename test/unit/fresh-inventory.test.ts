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
  it('is not read again inside half the window; is read ahead past half; is waited for past the window', async () => {
    const { inventory, clock, etags } = fresh([changedTo(6, '"a"'), async () => ({ changed: false })]);
    clock.now = CHECK_WINDOW_MS / 2;
    expect((await inventory.current()).get(1n)?.quantity).toBe(5);
    expect(etags).toEqual([]);
    clock.now = CHECK_WINDOW_MS / 2 + 1;
    // Read ahead: this write still goes on the read it has, inside the window.
    expect((await inventory.current()).get(1n)?.quantity).toBe(5);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(inventory.reads).toEqual({ again: 1, changed: 1 });
    expect((await inventory.current()).get(1n)?.quantity).toBe(6);
    // Past the window of the read sent at 501, the next write waits for a conditional read: a 304 keeps it.
    clock.now = CHECK_WINDOW_MS / 2 + 1 + CHECK_WINDOW_MS + 1;
    expect((await inventory.current()).get(1n)?.quantity).toBe(6);
    expect(etags).toEqual([undefined, '"a"']);
    expect(inventory.reads).toEqual({ again: 2, changed: 1 });
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
