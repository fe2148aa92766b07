import { randomBytes } from 'node:crypto';
import { serializeItem } from '../contract/json';
import { comparePetIds, PET_STATUSES } from '../contract/rules';
import type { InventoryItem } from '../contract/schemas';

/** Where the store makes its changes durable (see data-file.ts); absent, the store lives in memory only. */
export interface InventoryPersistence {
  /** Makes `changes` durable, then calls `done` with null, or with the failure (none applied). One at a time. */
  append(changes: readonly InventoryItem[], done: (error: Error | null) => void): void;
  /** True when the changes written so far should be folded into a whole new snapshot. */
  wantsSnapshot(inventorySize: number): boolean;
  /** Writes the whole inventory anew; never called while an append is under way. */
  writeSnapshot(listBody: Buffer): Promise<void>;
}

/** How many items one cached slice of the serialized list holds: one change re-serializes one slice. */
const SLICE_SIZE = 2048;

const COMMA = Buffer.from(',');
const OPEN = Buffer.from('[');
const CLOSE = Buffer.from(']');

/** An update refused because the pet no longer held the quantity it was sent for (Petinv-If-Quantity). */
export class QuantityChanged extends Error {
  constructor(readonly current: number) {
    super(`the pet holds ${current}`);
  }
}

interface PendingUpdate {
  item: InventoryItem;
  position: number;
  /** The quantity the pet must hold when this update's turn comes, or it is refused (QuantityChanged). */
  ifQuantity: number | undefined;
  /** Told how the update ended: null, or the storage failure, and then nothing of it was applied. */
  done: (error: Error | null) => void;
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
 * serve's inventory: items in petId order, the list cached slice by slice, and group commit (one commit
 * under way, what arrives meanwhile all in the next; two in flight measured slower). GET and its ETag show
 * only what is durable: a change is applied once written, one whose write failed dropped.
 */
export class InventoryStore {
  private readonly items: InventoryItem[];
  private readonly positions = new Map<bigint, number>();
  private readonly slices: (Buffer | undefined)[];
  private listBodyCache: Buffer | undefined;
  private readonly instanceTag = randomBytes(4).toString('hex');
  private version = 0;
  private currentEtag = `"${this.instanceTag}-0"`;
  private pending: PendingUpdate[] = [];
  /** Per pet, its updates not yet applied or dropped: while any is, an update must take its turn. */
  private readonly unsettled = new Map<bigint, number>();
  private commitScheduled = false;
  private committing = false;
  private snapshotting: Promise<void> | undefined;
  private readonly idleWaiters: (() => void)[] = [];

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
    return this.currentEtag;
  }

  /** The JSON array of every item, serialized again only in the slices that changed. */
  listBody(): Buffer {
    if (this.listBodyCache) return this.listBodyCache;
    const parts: Buffer[] = [OPEN];
    for (let slice = 0; slice < this.slices.length; slice++) {
      let bytes = this.slices[slice];
      if (!bytes) {
        const start = slice * SLICE_SIZE;
        const items = this.items.slice(start, start + SLICE_SIZE);
        bytes = Buffer.from(items.map(serializeItem).join(','));
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
   * it could not be written (and then nothing of it was applied), or with QuantityChanged when
   * `ifQuantity` is given and the pet holds another quantity when the update's turn comes.
   */
  setQuantity(petId: bigint, quantity: number, ifQuantity?: number): Promise<InventoryItem | undefined> {
    const position = this.positions.get(petId);
    const current = position === undefined ? undefined : this.items[position];
    if (position === undefined || !current) return Promise.resolve(undefined);
    const settled = !this.persistence || !this.unsettled.has(petId);
    if (settled && ifQuantity !== undefined && current.quantity !== ifQuantity)
      return Promise.reject(new QuantityChanged(current.quantity));
    // Nothing to write: the durable value already is this one, and no other update of the pet is on its way.
    if (current.quantity === quantity && settled) return Promise.resolve(current);
    const item = { petId, quantity, status: current.status };
    if (!this.persistence) {
      this.apply([{ item, position }]);
      return Promise.resolve(item);
    }
    this.unsettled.set(petId, (this.unsettled.get(petId) ?? 0) + 1);
    // A commit under way (or a snapshot) starts the next one when it ends; an idle store waits one turn.
    if (!this.committing && !this.snapshotting && !this.commitScheduled) {
      this.commitScheduled = true;
      setImmediate(this.runScheduledCommit);
    }
    return new Promise((resolve, reject) =>
      this.pending.push({
        item,
        position,
        ifQuantity,
        done: (error) => (error ? reject(error) : resolve(item)),
      }),
    );
  }

  /** Waits until every update received so far is applied or refused, and no write is under way. */
  close(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private isIdle(): boolean {
    return this.pending.length === 0 && !this.committing && !this.snapshotting && !this.commitScheduled;
  }

  private apply(updates: readonly Pick<PendingUpdate, 'item' | 'position'>[]): void {
    for (const { item, position } of updates) {
      this.items[position] = item;
      this.slices[Math.floor(position / SLICE_SIZE)] = undefined;
    }
    this.listBodyCache = undefined;
    this.currentEtag = `"${this.instanceTag}-${++this.version}"`;
  }

  /** Starting a turn after the first update lets every request that arrived in that turn join the commit. */
  private readonly runScheduledCommit = () => {
    this.commitScheduled = false;
    this.startCommit();
  };

  /** Commits every waiting update in one write: group commit. */
  private startCommit(): void {
    const { persistence } = this;
    if (!persistence || this.committing || this.snapshotting) return;
    // A snapshot holds what is applied: new commits wait for it.
    if (persistence.wantsSnapshot(this.items.length)) return void this.startSnapshot(persistence);
    const batch = this.keepingTheirTurn(this.pending);
    this.pending = [];
    if (batch.length === 0) return void this.notifyIfIdle();
    this.committing = true;
    const changes = batch.map((update) => update.item);
    persistence.append(changes, (error) => this.settle(batch, error));
  }

  /**
   * The updates whose Petinv-If-Quantity still holds, each against what the pet holds once the earlier
   * updates of the batch are applied (every earlier batch is settled by now); the others are refused.
   */
  private keepingTheirTurn(pending: readonly PendingUpdate[]): PendingUpdate[] {
    const held = new Map<bigint, number>();
    return pending.filter((update) => {
      const { petId } = update.item;
      const holds = held.get(petId) ?? (this.items[update.position] as InventoryItem).quantity;
      if (update.ifQuantity !== undefined && update.ifQuantity !== holds) {
        this.release(petId);
        update.done(new QuantityChanged(holds));
        return false;
      }
      held.set(petId, update.item.quantity);
      return true;
    });
  }

  private release(petId: bigint): void {
    const count = (this.unsettled.get(petId) ?? 1) - 1;
    if (count === 0) this.unsettled.delete(petId);
    else this.unsettled.set(petId, count);
  }

  /** Applies a written batch (or drops a failed one), starts the next commit, then answers the batch. */
  private settle(batch: readonly PendingUpdate[], error: Error | null): void {
    this.committing = false;
    for (const { item } of batch) this.release(item.petId);
    if (!error) this.apply(batch);
    // The next batch goes to disk before this one is answered: the disk works while the answers go out.
    this.startCommit();
    for (const update of batch) update.done(error);
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
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }
}
