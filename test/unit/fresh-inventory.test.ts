import { describe, expect, it } from 'vitest';
import { CHECK_WINDOW_MS, FreshInventory } from '../../src/bulk/fresh';
import type { InventoryPoll } from '../../src/client/list-read';

/** FreshInventory on a clock the test moves, against a poll that answers as told. */
function fresh(answers: (() => Promise<InventoryPoll>)[], storeId?: string) {
  const clock = { now: 0 };
  const etags: (string | undefined)[] = [];
  const inventory = new FreshInventory(
    {
      storeId,
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

/** A poll answer the test releases when it chooses. */
function held(answer: InventoryPoll) {
  let release = () => {};
  const poll = () => new Promise<InventoryPoll>((resolve) => (release = () => resolve(answer)));
  return { poll, release: () => release() };
}

describe('FreshInventory: what a write is checked against', () => {
  it('is read again once three quarters of the window passed, while writes go on against the last read', async () => {
    const next = held({
      changed: true,
      items: [{ petId: 1n, quantity: 6, status: 'available' }],
      etag: '"a"',
    });
    const { inventory, clock, etags } = fresh([next.poll, async () => ({ changed: false })]);
    clock.now = CHECK_WINDOW_MS * 0.75;
    expect((await inventory.current()).get(1n)?.quantity).toBe(5);
    expect(etags).toEqual([]);
    clock.now = CHECK_WINDOW_MS * 0.75 + 1;
    // The read is under way; the last read is still inside the window, so the write does not wait for it.
    expect((await inventory.current()).get(1n)?.quantity).toBe(5);
    expect(etags).toEqual([undefined]);
    next.release();
    await new Promise((resolve) => setImmediate(resolve));
    expect((await inventory.current()).get(1n)?.quantity).toBe(6);
    // A 304 keeps what it has.
    clock.now = CHECK_WINDOW_MS * 2.5 + 2;
    expect((await inventory.current()).get(1n)?.quantity).toBe(6);
    expect(etags).toEqual([undefined, '"a"']);
  });

  it('a write waits for the read under way once the last read is past the window', async () => {
    const next = held({
      changed: true,
      items: [{ petId: 1n, quantity: 7, status: 'available' }],
      etag: '"b"',
    });
    const { inventory, clock } = fresh([next.poll]);
    clock.now = CHECK_WINDOW_MS * 0.8;
    await inventory.current();
    clock.now = CHECK_WINDOW_MS + 1;
    let settled = false;
    const waiting = inventory.current().then((items) => {
      settled = true;
      return items;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    next.release();
    expect((await waiting).get(1n)?.quantity).toBe(7);
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

  it('a read that fails inside the window fails no write, and is made again', async () => {
    const { inventory, clock, etags } = fresh([
      async () => {
        throw new Error('gone');
      },
      changedTo(8, '"c"'),
    ]);
    clock.now = CHECK_WINDOW_MS * 0.8;
    expect((await inventory.current()).get(1n)?.quantity).toBe(5);
    await new Promise((resolve) => setImmediate(resolve));
    clock.now = CHECK_WINDOW_MS * 1.2;
    expect((await inventory.current()).get(1n)?.quantity).toBe(8);
    expect(etags).toEqual([undefined, undefined]);
  });

  it('is never read again from a petinv serve, which checks each write itself (Petinv-If-Quantity)', async () => {
    const { inventory, clock, etags } = fresh([], 'store-0123456789');
    clock.now = CHECK_WINDOW_MS * 5;
    expect((await inventory.current()).get(1n)?.quantity).toBe(5);
    expect(etags).toEqual([]);
  });
});
