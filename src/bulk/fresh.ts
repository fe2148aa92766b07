import type { InventoryClient } from '../client/client';
import type { InventoryItem } from '../contract/schemas';

/**
 * How old the list a write is checked against may be. The spec has no conditional PATCH, so a change made
 * inside the window is still overwritten; a longer run re-reads as it goes. A petinv serve (it says its
 * store) checks each write itself (Petinv-If-Quantity), so a run against one needs no read again.
 */
export const CHECK_WINDOW_MS = 1000;

const READ_AGAIN_AT_MS = CHECK_WINDOW_MS * 0.75;

/**
 * The inventory as a run last read it, read again (a conditional GET) once READ_AGAIN_AT_MS old: writes go
 * on against the last read inside the window, and wait only past it. Pets this run sent are never checked
 * again (a sheet names each pet once), so a read seeing some written and some not decides nothing of them.
 */
export class FreshInventory {
  private items: Map<bigint, InventoryItem>;
  private etag: string | undefined;
  /** When the read behind `items` was sent: the service's state is at least that recent. */
  private sentAt: number;
  private reading: Promise<void> | undefined;

  constructor(
    private readonly client: Pick<InventoryClient, 'pollInventory' | 'storeId'>,
    first: { items: readonly InventoryItem[]; etag?: string; sentAt: number },
    private readonly now = () => performance.now(),
  ) {
    this.items = new Map(first.items.map((item) => [item.petId, item]));
    this.etag = first.etag;
    this.sentAt = first.sentAt;
  }

  /** The items as read first: what a plan is made against. */
  get first(): ReadonlyMap<bigint, InventoryItem> {
    return this.items;
  }

  /** The items as the service held them no more than CHECK_WINDOW_MS ago (or one read's time, if longer). */
  async current(): Promise<ReadonlyMap<bigint, InventoryItem>> {
    if (this.client.storeId !== undefined) return this.items;
    if (!this.reading && this.now() - this.sentAt > READ_AGAIN_AT_MS) {
      this.reading = this.readAgain();
      // Awaited only by a write that finds the last read past the window; a failure then fails that write.
      this.reading.catch(() => {});
    }
    if (this.reading && this.now() - this.sentAt > CHECK_WINDOW_MS) await this.reading;
    return this.items;
  }

  private async readAgain(): Promise<void> {
    try {
      const sentAt = this.now();
      const poll = await this.client.pollInventory(this.etag);
      if (poll.changed) {
        this.items = new Map(poll.items.map((item) => [item.petId, item]));
        this.etag = poll.etag;
      }
      this.sentAt = sentAt;
    } finally {
      this.reading = undefined;
    }
  }
}
