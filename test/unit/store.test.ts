import { describe, expect, it } from 'vitest';
import { parseInventoryJson, serializeItems } from '../../src/contract/json';
import { type InventoryItem, InventoryList, parsePetId } from '../../src/contract/schemas';
import {
  type InventoryPersistence,
  InventoryStore,
  QuantityChanged,
  seedInventory,
} from '../../src/server/store';

/** A persistence that only appends, as `append` settles: the snapshot side is data-file.ts's and tested there. */
function appendOnly(append: (changes: readonly InventoryItem[]) => Promise<void>): InventoryPersistence {
  return {
    append: (changes, done) =>
      append(changes).then(
        () => done(null),
        (error: Error) => done(error),
      ),
    wantsSnapshot: () => false,
    writeSnapshot: async () => {},
  };
}

describe('parsePetId', () => {
  it.each([
    ['0', 0n],
    ['42', 42n],
    ['-7', -7n],
    ['9223372036854775807', 9223372036854775807n],
    ['-9223372036854775808', -9223372036854775808n],
  ])('reads %s', (text, id) => expect(parsePetId(text)).toBe(id));
  it.each(['', ' 1', '1.0', '1e3', '01', '+1', '-0x1', '9223372036854775808', '-9223372036854775809', 'abc'])(
    'rejects %j',
    (text) => expect(parsePetId(text)).toBeUndefined(),
  );
});

describe('lossless inventory JSON', () => {
  it('keeps petIds above 2^53 exact through parse, schema and serialize', () => {
    const text =
      '[{"petId":9007199254740993,"quantity":1,"status":"sold"},{"petId" : -9223372036854775808 ,"quantity":2,"status":"pending"}]';
    const items = InventoryList.parse(parseInventoryJson(text));
    expect(items[0]?.petId).toBe(9007199254740993n);
    expect(serializeItems(items)).toBe(
      '[{"petId":9007199254740993,"quantity":1,"status":"sold"},{"petId":-9223372036854775808,"quantity":2,"status":"pending"}]',
    );
  });
  it('leaves "petId" inside strings alone and rejects a fractional petId', () => {
    const parsed = parseInventoryJson('{"note":"\\"petId\\":5","petId":1.5}') as Record<string, unknown>;
    // A petId that is not a JSON integer is left as its text, which no petId schema takes.
    expect(parsed).toEqual({ note: '"petId":5', petId: '1.5' });
    expect(InventoryList.safeParse([{ petId: '1.5', quantity: 1, status: 'sold' }]).success).toBe(false);
    expect(InventoryList.safeParse([{ petId: 1.5, quantity: 1, status: 'sold' }]).success).toBe(false);
  });
});

describe('InventoryStore', () => {
  it('seeds a dozen pets across every status', () => {
    const items = seedInventory(12);
    expect(new Set(items.map((item) => item.status))).toEqual(new Set(['available', 'pending', 'sold']));
  });

  it('re-serializes only after a change, and keeps petId order', () => {
    const store = new InventoryStore([...seedInventory(5000)].reverse());
    const body = store.listBody();
    expect(store.listBody()).toBe(body);
    expect(
      JSON.parse(body.toString())
        .map((item: { petId: number }) => item.petId)
        .slice(0, 3),
    ).toEqual([1, 2, 3]);
    void store.setQuantity(4000n, 123456);
    const changed = store.listBody();
    expect(changed).not.toBe(body);
    expect(JSON.parse(changed.toString())[3999]).toMatchObject({ petId: 4000, quantity: 123456 });
  });

  it('batches the updates that wait during one commit into the next commit', async () => {
    const commits: bigint[][] = [];
    let release: () => void = () => {};
    const store = new InventoryStore(
      seedInventory(10),
      appendOnly(async (changes) => {
        commits.push(changes.map((item) => item.petId));
        await new Promise<void>((resolve) => {
          release = resolve;
        });
      }),
    );
    const first = [1n, 2n].map((id) => store.setQuantity(id, 100));
    await new Promise((resolve) => setImmediate(resolve));
    expect(commits).toEqual([[1n, 2n]]);
    const rest = [3n, 4n, 3n, 5n].map((id, i) => store.setQuantity(id, 200 + i));
    release();
    await Promise.all(first);
    await new Promise((resolve) => setImmediate(resolve));
    expect(commits).toEqual([
      [1n, 2n],
      [3n, 4n, 3n, 5n],
    ]);
    release();
    await Promise.all(rest);
    expect(store.get(3n)?.quantity).toBe(202);
  });

  it('keeps one commit under way, gathers what arrives meanwhile, and starts it as soon as that one ends', async () => {
    const releases: Array<() => void> = [];
    const commits: bigint[][] = [];
    const store = new InventoryStore(
      seedInventory(10),
      appendOnly((changes) => {
        commits.push(changes.map((item) => item.petId));
        return new Promise<void>((resolve) => releases.push(resolve));
      }),
    );
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    const first = store.setQuantity(1n, 50);
    await turn();
    const second = store.setQuantity(2n, 50);
    await turn();
    const third = store.setQuantity(3n, 50);
    await turn();
    // The second and third wait for the first, and then go to disk together.
    expect(commits).toEqual([[1n]]);
    expect(store.get(2n)?.quantity).not.toBe(50);
    releases[0]?.();
    await first;
    // Started by the end of the first, with no turn in between: the disk is never left idle.
    expect(commits).toEqual([[1n], [2n, 3n]]);
    expect(store.get(2n)?.quantity).not.toBe(50);
    releases[1]?.();
    expect(await Promise.all([second, third])).toMatchObject([{ quantity: 50 }, { quantity: 50 }]);
    expect(store.get(2n)?.quantity).toBe(50);
  });

  it('neither shows nor later writes an update whose commit failed', async () => {
    let failing = true;
    const committed: bigint[] = [];
    const store = new InventoryStore(
      seedInventory(3),
      appendOnly(async (changes) => {
        if (failing) throw new Error('disk full');
        committed.push(...changes.map((item) => item.petId));
      }),
    );
    const before = store.etag;
    await expect(store.setQuantity(1n, 9)).rejects.toThrow('disk full');
    expect(store.get(1n)?.quantity).not.toBe(9);
    expect(store.etag).toBe(before);
    failing = false;
    await store.setQuantity(2n, 9);
    expect(committed).toEqual([2n]);
  });

  it('shows an update, in GET and the ETag, only once it is durable', async () => {
    let release: () => void = () => {};
    const store = new InventoryStore(
      seedInventory(3),
      appendOnly(() => new Promise<void>((resolve) => (release = resolve))),
    );
    const before = store.etag;
    const body = store.listBody().toString();
    const update = store.setQuantity(1n, 77);
    await new Promise((resolve) => setImmediate(resolve));
    expect(store.listBody().toString()).toBe(body);
    expect(store.etag).toBe(before);
    release();
    await update;
    expect(store.listBody().toString()).toContain('{"petId":1,"quantity":77,');
    expect(store.etag).not.toBe(before);
  });

  it('answers each update with the item as its own write left it', async () => {
    const store = new InventoryStore(
      seedInventory(3),
      appendOnly(async () => {}),
    );
    const answers = await Promise.all([11, 22, 33].map((quantity) => store.setQuantity(2n, quantity)));
    expect(answers.map((item) => item?.quantity)).toEqual([11, 22, 33]);
    expect(store.get(2n)?.quantity).toBe(33);
  });

  it('lets a same-value update wait for an earlier write of the pet, and share its fate', async () => {
    let fail: (error: Error) => void = () => {};
    const store = new InventoryStore(
      seedInventory(3),
      appendOnly(() => new Promise<void>((_resolve, reject) => (fail = reject))),
    );
    const current = store.get(1n)?.quantity ?? 0;
    const change = store.setQuantity(1n, current + 1);
    const back = store.setQuantity(1n, current);
    await new Promise((resolve) => setImmediate(resolve));
    fail(new Error('EIO'));
    await expect(change).rejects.toThrow('EIO');
    await expect(back).rejects.toThrow('EIO');
    expect(store.get(1n)?.quantity).toBe(current);
  });

  it('applies an update with ifQuantity only if the pet holds it when its turn comes, in arrival order', async () => {
    const written: number[][] = [];
    const store = new InventoryStore(
      seedInventory(3),
      appendOnly(async (changes) => {
        written.push(changes.map((item) => item.quantity));
      }),
    );
    const start = store.get(2n)?.quantity as number;
    // One batch: the first holds (start), the second expects start too but comes after it, the third
    // expects what the first leaves.
    const answers = await Promise.allSettled([
      store.setQuantity(2n, 100, start),
      store.setQuantity(2n, 200, start),
      store.setQuantity(2n, 300, 100),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((answers[1] as PromiseRejectedResult).reason).toEqual(new QuantityChanged(100));
    expect(written).toEqual([[100, 300]]);
    expect(store.get(2n)?.quantity).toBe(300);
    // Settled, and in memory: checked at once.
    await expect(store.setQuantity(2n, 5, 7)).rejects.toEqual(new QuantityChanged(300));
    const inMemory = new InventoryStore(seedInventory(3));
    await expect(inMemory.setQuantity(1n, 5, 999)).rejects.toBeInstanceOf(QuantityChanged);
    expect((await inMemory.setQuantity(1n, 5, inMemory.get(1n)?.quantity))?.quantity).toBe(5);
  });

  it('answers undefined for an unknown pet', async () => {
    expect(await new InventoryStore(seedInventory(3)).setQuantity(99n, 1)).toBeUndefined();
  });

  it('refuses duplicate petIds', () => {
    expect(() => new InventoryStore([...seedInventory(2), ...seedInventory(1)])).toThrow(
      'petId 1 appears more than once',
    );
  });
});
