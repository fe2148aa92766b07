import type { IncomingMessage } from 'node:http';

/**
 * How a write tells the HTTP layer (http-server.ts) that its place among the writes is fixed: its update
 * is queued in the store, which applies its queue in order. A PATCH pipelined behind it on the same
 * connection may then start, and join the same group commit, instead of waiting for this one's answer.
 */
export const PLACE_FIXED = Symbol('the place of this write among the writes is fixed');

export type PlacedRequest = IncomingMessage & { [PLACE_FIXED]?: () => void };

/** Called by a write's handler once its update is queued in the store. */
export function placeFixed(req: IncomingMessage): void {
  (req as PlacedRequest)[PLACE_FIXED]?.();
}
