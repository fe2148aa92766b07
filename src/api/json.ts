import type { InventoryItem } from './schemas';

/**
 * JSON.parse turns every number into a double, which cannot hold a petId above 2^53. Node 20 has no
 * JSON.parse source access, and a full lossless parser is several times slower on a million items,
 * so the petId values are quoted before parsing and the schema reads them as int64 text.
 *
 * The pattern only matches a key: an unescaped `"petId"` followed by `:` cannot stand inside a JSON
 * string. Numbers with a fraction or exponent are left alone for the schema to reject.
 */
const PET_ID_NUMBER = /"petId"(\s*):(\s*)(-?\d+)(?![\d.eE])/g;

export function parseInventoryJson(text: string): unknown {
  return JSON.parse(text.replace(PET_ID_NUMBER, '"petId"$1:$2"$3"'));
}

/** The exact wire form of an item; petId is written as a bare integer, never rounded. */
export function serializeItem(item: InventoryItem): string {
  return `{"petId":${item.petId},"quantity":${item.quantity},"status":"${item.status}"}`;
}

export function serializeItems(items: readonly InventoryItem[]): string {
  return `[${items.map(serializeItem).join(',')}]`;
}

export function serializeUpdate(quantity: number): string {
  return `{"quantity":${quantity}}`;
}
