import type { InventoryItem, PetStatus } from '../contract/schemas';

/** One pet whose stock changed between two polls; `from` is null for a new pet, `to` for a removed one. */
export interface InventoryChange {
  petId: bigint;
  from: number | null;
  to: number | null;
  /** The status now, or the last one known for a removed pet. */
  status: PetStatus;
}

export type InventoryIndex = ReadonlyMap<bigint, InventoryItem>;

export const indexInventory = (items: readonly InventoryItem[]): InventoryIndex =>
  new Map(items.map((item) => [item.petId, item]));

function changeOf(petId: bigint, before: InventoryItem | undefined, after: InventoryItem | undefined) {
  if (before && after && before.quantity === after.quantity && before.status === after.status)
    return undefined;
  const status = (after ?? before)?.status as PetStatus;
  return { petId, from: before?.quantity ?? null, to: after?.quantity ?? null, status };
}

/** The pets of either view whose item changed, appeared or went (not merely moved in or out): new order, then gone. */
export function changesBetween(
  before: InventoryIndex,
  after: InventoryIndex,
  viewBefore: readonly InventoryItem[],
  viewAfter: readonly InventoryItem[],
): InventoryChange[] {
  const changes: InventoryChange[] = [];
  const seen = new Set<bigint>();
  for (const view of [viewAfter, viewBefore])
    for (const { petId } of view) {
      if (seen.has(petId)) continue;
      seen.add(petId);
      const change = changeOf(petId, before.get(petId), after.get(petId));
      if (change) changes.push(change);
    }
  return changes;
}

/** One event line: petId an exact integer, as everywhere in petinv's JSON; `at` the poll that saw it. */
export function changeJson(change: InventoryChange, at: Date): string {
  return `{"petId":${change.petId},"from":${change.from},"to":${change.to},"status":"${change.status}","at":"${at.toISOString()}"}\n`;
}
