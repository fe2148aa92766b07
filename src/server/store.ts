import { randomBytes } from 'node:crypto';
import { serializeItem } from '../api/json';
import { type InventoryItem, PET_STATUSES } from '../api/schemas';

/** Where the store makes its changes durable (see data-file.ts); absent, the store lives in memory only. */
export interface InventoryPersistence {
  /**
   * Resolves once `changes`, and those of every commit begun before, are on disk. Two commits may be
   * under way at once. `listBody` yields the whole inventory, for a persistence that would rather write
   * everything anew; `size` is how many items that holds.
   */
  commit(changes: readonly InventoryItem[], listBody: () => Buffer, size: number): Promise<void>;
}

/**
 * Commits that may overlap: the next batch is written while the previous one is still syncing, so a
 * request waits for the next fsync to start rather than for the current one to end.
 */
const MAX_COMMITS_IN_FLIGHT = 2;

/** How many items one cached slice of the serialized list holds: one change re-serializes one slice. */
const SLICE_SIZE = 2048;

const COMMA = Buffer.from(',');
const OPEN = Buffer.from('[');
const CLOSE = Buffer.from(']');

interface Waiter {
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
  private etagCache = '';
  private etagVersion = -1;
  private durableVersion = 0;
  private waiters: Waiter[] = [];
  /** The latest state of each pet changed since the last commit. */
  private uncommitted = new Map<bigint, InventoryItem>();
  private commitScheduled = false;
  private readonly commitsInFlight = new Set<Promise<void>>();

  constructor(
    items: readonly InventoryItem[],
    private readonly persistence?: InventoryPersistence,
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

  get(petId: bigint): InventoryItem | undefined {
    const position = this.positions.get(petId);
    return position === undefined ? undefined : this.items[position];
  }

  /** Changes with every update that changes a quantity; differs between two runs of the server. */
  get etag(): string {
    if (this.etagVersion !== this.version) {
      this.etagCache = `"${this.instanceTag}-${this.version}"`;
      this.etagVersion = this.version;
    }
    return this.etagCache;
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
      if (this.persistence) this.uncommitted.set(petId, updated);
      this.slices[Math.floor(position / SLICE_SIZE)] = undefined;
      this.listBodyCache = undefined;
      this.version++;
    }
    // An unchanged value is acknowledged only once any earlier write of it is durable too.
    await this.durable(this.version);
    return this.items[position];
  }

  /** Waits until every change made so far is on disk and no commit is under way. */
  async close(): Promise<void> {
    await this.durable(this.version);
    await Promise.allSettled(this.commitsInFlight);
  }

  private durable(version: number): Promise<void> {
    if (!this.persistence || version <= this.durableVersion) return Promise.resolve();
    const done = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    this.scheduleCommit();
    return done;
  }

  private scheduleCommit(): void {
    if (this.commitScheduled || this.commitsInFlight.size >= MAX_COMMITS_IN_FLIGHT) return;
    this.commitScheduled = true;
    // Starting on the next turn lets every request that arrived in this turn join the commit.
    setImmediate(() => {
      this.commitScheduled = false;
      this.startCommit();
    });
  }

  /** Commits every waiting change in one write: group commit. */
  private startCommit(): void {
    const { persistence } = this;
    if (!persistence || this.waiters.length === 0 || this.commitsInFlight.size >= MAX_COMMITS_IN_FLIGHT)
      return;
    const version = this.version;
    const covered = this.waiters;
    const changes = this.uncommitted;
    this.waiters = [];
    this.uncommitted = new Map();
    const commit = persistence
      .commit([...changes.values()], () => this.listBody(), this.items.length)
      .then(
        () => {
          this.durableVersion = Math.max(this.durableVersion, version);
          for (const waiter of covered) waiter.resolve();
        },
        (error: unknown) => {
          // Those changes stay in memory and go with the next commit; their callers hear of the failure.
          for (const [petId, item] of changes)
            if (!this.uncommitted.has(petId)) this.uncommitted.set(petId, item);
          for (const waiter of covered) waiter.reject(error);
        },
      )
      .finally(() => {
        this.commitsInFlight.delete(commit);
        if (this.waiters.length > 0) this.scheduleCommit();
      });
    this.commitsInFlight.add(commit);
  }
}
