import type { InventoryClient } from '../client/client';
import type { InventoryItem } from '../contract/schemas';

/**
 * How old the list a write is checked against may be: each pet's `from` (and the history's before) is
 * what the service held at most this long before its PATCH was sent. The service has no conditional
 * PATCH, so a change made inside the window is still overwritten; a longer run re-reads as it goes.
 */
export const CHECK_WINDOW_MS = 1000;

/**
 * The inventory as a run last read it, read again (a conditional GET: a 304 when nothing changed) once
 * the read is older than the window. A new read starts at half the window, so writes seldom wait for it.
 */
export class FreshInventory {
  private items: Map<bigint, InventoryItem>;
  private etag: string | undefined;
  /** When the read behind `items` was sent: the service's state is at least that recent. */
  private sentAt: number;
  private reading: Promise<void> | undefined;
  /** Reads after the first, and how many of them found the list changed. */
  readonly reads = { again: 0, changed: 0 };

  constructor(
    private readonly client: Pick<InventoryClient, 'pollInventory'>,
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
    const age = this.now() - this.sentAt;
    if (age > CHECK_WINDOW_MS / 2 && !this.reading) {
      this.reading = this.readAgain();
      // Started ahead of need: a failure is met by the write that waits for it, or by the next read.
      this.reading.catch(() => {});
    }
    if (age > CHECK_WINDOW_MS) await this.reading;
    return this.items;
  }

  private async readAgain(): Promise<void> {
    const sentAt = this.now();
    try {
      const poll = await this.client.pollInventory(this.etag);
      this.reads.again++;
      if (poll.changed) {
        this.reads.changed++;
        this.items = new Map(poll.items.map((item) => [item.petId, item]));
        this.etag = poll.etag;
      }
      this.sentAt = sentAt;
    } finally {
      this.reading = undefined;
    }
  }
}
