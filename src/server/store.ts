import { randomBytes } from 'node:crypto';
import { serializeItem } from '../api/json';
import { comparePetIds, type InventoryItem, PET_STATUSES } from '../api/schemas';

/** Where the store makes its changes durable (see data-file.ts); absent, the store lives in memory only. */
export interface InventoryPersistence {
  /**
   * Resolves once `changes` are on disk and every append begun before has settled; rejects when they
   * could not be written, and then none of them may be applied. Two appends may be under way at once.
   */
  append(changes: readonly InventoryItem[]): Promise<void>;
  /** True when the changes written so far should be folded into a whole new snapshot. */
  wantsSnapshot(inventorySize: number): boolean;
  /** Writes the whole inventory anew; never called while an append is under way. */
  writeSnapshot(listBody: Buffer): Promise<void>;
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

/** An update waiting to be written, and the request waiting for it. */
interface PendingUpdate {
  item: InventoryItem;
  position: number;
  resolve: (item: InventoryItem) => void;
  reject: (error: unknown) => void;
}

export interface StoreOptions {
  /** Told of a background snapshot that failed (the journal still holds every change). */
  onSnapshotError?: (error: unknown) => void;
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
 * The inventory of `petinv serve`: items in petId order, the serialized list cached slice by slice, and
 * updates made durable by group commit (every update waiting while one write runs is covered by the
 * next single write). What GET shows, and its ETag, is only ever what is durable: a change is applied
 * once its write succeeded, and a change whose write failed is dropped, never shown, never written later.
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
  private pending: PendingUpdate[] = [];
  /** Per pet, its updates not yet applied or dropped: while any is, an update must take its turn. */
  private readonly unsettled = new Map<bigint, number>();
  private commitScheduled = false;
  private commitsInFlight = 0;
  /** Settles once the latest commit has been applied or dropped: commits settle in the order they began. */
  private lastCommit: Promise<void> = Promise.resolve();
  private snapshotting: Promise<void> | undefined;
  private idleWaiters: (() => void)[] = [];

  constructor(
    items: readonly InventoryItem[],
    private readonly persistence?: InventoryPersistence,
    private readonly options: StoreOptions = {},
  ) {
    this.items = [...items].sort((a, b) => comparePetIds(a.petId, b.petId));
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

  /** Changes with every durable update that changes a quantity; differs between two runs of the server. */
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
   * Sets one pet's quantity; status is left as it is. Resolves with the item as this update left it,
   * once it is durable; with undefined when there is no such pet; rejects with the storage failure when
   * it could not be written (and then nothing of it was applied).
   */
  setQuantity(petId: bigint, quantity: number): Promise<InventoryItem | undefined> {
    const position = this.positions.get(petId);
    const current = position === undefined ? undefined : this.items[position];
    if (position === undefined || !current) return Promise.resolve(undefined);
    // Nothing to write: the durable value already is this one, and no other update of the pet is on its way.
    if (current.quantity === quantity && !this.unsettled.has(petId)) return Promise.resolve(current);
    const item = { petId, quantity, status: current.status };
    if (!this.persistence) {
      this.apply([{ item, position }]);
      return Promise.resolve(item);
    }
    this.unsettled.set(petId, (this.unsettled.get(petId) ?? 0) + 1);
    return new Promise((resolve, reject) => {
      this.pending.push({ item, position, resolve, reject });
      this.scheduleCommit();
    });
  }

  /** Waits until every update received so far is applied or refused, and no write is under way. */
  close(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private isIdle(): boolean {
    return (
      this.pending.length === 0 && this.commitsInFlight === 0 && !this.snapshotting && !this.commitScheduled
    );
  }

  private apply(updates: readonly { item: InventoryItem; position: number }[]): void {
    for (const { item, position } of updates) {
      this.items[position] = item;
      this.slices[Math.floor(position / SLICE_SIZE)] = undefined;
    }
    this.listBodyCache = undefined;
    this.version++;
  }

  private scheduleCommit(): void {
    if (this.commitScheduled) return;
    this.commitScheduled = true;
    // Starting on the next turn lets every request that arrived in this turn join the commit.
    setImmediate(() => {
      this.commitScheduled = false;
      this.startCommit();
    });
  }

  /** Commits every waiting update in one write: group commit. */
  private startCommit(): void {
    const { persistence } = this;
    if (!persistence || this.snapshotting) return;
    if (persistence.wantsSnapshot(this.items.length)) {
      // A snapshot must not miss a change still being written: let the writes drain, then take it.
      if (this.commitsInFlight === 0) this.startSnapshot(persistence);
      return;
    }
    if (this.pending.length === 0) {
      this.notifyIfIdle();
      return;
    }
    if (this.commitsInFlight >= MAX_COMMITS_IN_FLIGHT) return;
    const batch = this.pending;
    this.pending = [];
    this.commitsInFlight++;
    const written = persistence.append(batch.map((update) => update.item));
    const previous = this.lastCommit;
    this.lastCommit = (async () => {
      let failure: unknown;
      let failed = false;
      try {
        await written;
      } catch (error) {
        failed = true;
        failure = error;
      }
      await previous;
      for (const { item } of batch) {
        const count = (this.unsettled.get(item.petId) ?? 1) - 1;
        if (count === 0) this.unsettled.delete(item.petId);
        else this.unsettled.set(item.petId, count);
      }
      if (failed) {
        for (const update of batch) update.reject(failure);
      } else {
        this.apply(batch);
        for (const update of batch) update.resolve(update.item);
      }
      this.commitsInFlight--;
      this.startCommit();
    })();
  }

  private startSnapshot(persistence: InventoryPersistence): void {
    this.snapshotting = persistence
      .writeSnapshot(this.listBody())
      .catch((error: unknown) => this.options.onSnapshotError?.(error))
      .finally(() => {
        this.snapshotting = undefined;
        this.startCommit();
      });
  }

  private notifyIfIdle(): void {
    if (!this.isIdle()) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
