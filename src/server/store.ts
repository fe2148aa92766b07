import { randomBytes } from 'node:crypto';
import { serializeItem } from '../api/json';
import { type InventoryItem, PET_STATUSES } from '../api/schemas';

/** Persists a whole inventory, given as the bytes of its JSON array; resolves once it is on disk. */
export type PersistInventory = (listBody: Buffer) => Promise<void>;

/** How many items one cached slice of the serialized list holds: one change re-serializes one slice. */
const SLICE_SIZE = 2048;

const COMMA = Buffer.from(',');
const OPEN = Buffer.from('[');
const CLOSE = Buffer.from(']');

interface Waiter {
  version: number;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** A deterministic sample inventory: petIds 1..count, every status, varied quantities. */
export function seedInventory(count: number): InventoryItem[] {
  return Array.from({ length: count }, (_, i) => ({
    petId: BigInt(i + 1),
    quantity: ((i + 1) * 37) % 25,
    status: PET_STATUSES[i % PET_STATUSES.length] ?? 'available',
  }));
}

/**
 * The inventory of `petinv serve`: items in petId order, the serialized list cached slice by slice,
 * and updates made durable by group commit (every update waiting while one write runs is covered by
 * the next single write).
 */
export class InventoryStore {
  private readonly items: InventoryItem[];
  private readonly positions = new Map<bigint, number>();
  private readonly slices: (Buffer | undefined)[];
  private listBodyCache: Buffer | undefined;
  private readonly instanceTag = randomBytes(4).toString('hex');
  private version = 0;
  private durableVersion = 0;
  private waiters: Waiter[] = [];
  private flushing: Promise<void> | undefined;

  constructor(
    items: readonly InventoryItem[],
    private readonly persist?: PersistInventory,
  ) {
    this.items = [...items].sort((a, b) => (a.petId < b.petId ? -1 : a.petId > b.petId ? 1 : 0));
    this.items.forEach((item, position) => {
      if (this.positions.has(item.petId)) throw new Error(`petId ${item.petId} appears more than once`);
      this.positions.set(item.petId, position);
    });
    this.slices = new Array(Math.ceil(this.items.length / SLICE_SIZE));
  }

  get size(): number {
    return this.items.length;
  }

  list(): readonly InventoryItem[] {
    return this.items;
  }

  get(petId: bigint): InventoryItem | undefined {
    const position = this.positions.get(petId);
    return position === undefined ? undefined : this.items[position];
  }

  /** Changes with every update that changes a quantity; differs between two runs of the server. */
  get etag(): string {
    return `"${this.instanceTag}-${this.version}"`;
  }

  /** The JSON array of every item, serialized again only in the slices that changed. */
  listBody(): Buffer {
    if (this.listBodyCache) return this.listBodyCache;
    const parts: Buffer[] = [OPEN];
    for (let slice = 0; slice < this.slices.length; slice++) {
      let bytes = this.slices[slice];
      if (!bytes) {
        const start = slice * SLICE_SIZE;
        bytes = Buffer.from(
          this.items
            .slice(start, start + SLICE_SIZE)
            .map(serializeItem)
            .join(','),
        );
        this.slices[slice] = bytes;
      }
      if (slice > 0) parts.push(COMMA);
      parts.push(bytes);
    }
    parts.push(CLOSE);
    this.listBodyCache = Buffer.concat(parts);
    return this.listBodyCache;
  }

  /**
   * Sets one pet's quantity; status is left as it is. Resolves with the updated item once the change
   * is durable, or with undefined when there is no such pet.
   */
  async setQuantity(petId: bigint, quantity: number): Promise<InventoryItem | undefined> {
    const position = this.positions.get(petId);
    const item = position === undefined ? undefined : this.items[position];
    if (position === undefined || !item) return undefined;
    if (item.quantity !== quantity) {
      const updated = { ...item, quantity };
      this.items[position] = updated;
      this.slices[Math.floor(position / SLICE_SIZE)] = undefined;
      this.listBodyCache = undefined;
      this.version++;
    }
    // An unchanged value is acknowledged only once any earlier write of it is durable too.
    await this.durable(this.version);
    return this.items[position];
  }

  /** Waits until every change made so far is on disk. */
  async close(): Promise<void> {
    await this.durable(this.version);
  }

  private durable(version: number): Promise<void> {
    if (!this.persist || version <= this.durableVersion) return Promise.resolve();
    const done = new Promise<void>((resolve, reject) => this.waiters.push({ version, resolve, reject }));
    this.flushing ??= this.flushLoop().finally(() => {
      this.flushing = undefined;
    });
    return done;
  }

  private async flushLoop(): Promise<void> {
    while (this.waiters.length > 0 && this.persist) {
      const version = this.version;
      const covered = this.waiters.filter((w) => w.version <= version);
      this.waiters = this.waiters.filter((w) => w.version > version);
      try {
        await this.persist(this.listBody());
        this.durableVersion = version;
        for (const waiter of covered) waiter.resolve();
      } catch (error) {
        // Those changes stay in memory and ride along with the next write; their callers hear of the failure.
        for (const waiter of covered) waiter.reject(error);
      }
    }
  }
}
