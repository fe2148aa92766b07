import type { InventoryClient } from '../client/client';
import type { InventoryItem } from '../contract/schemas';
import { PetinvError } from '../errors';

/** The current item of one pet, read from the inventory; a pet that is not there is a 404 as a write would be. */
export async function readCurrent(
  client: InventoryClient,
  petId: bigint,
  envName: string,
): Promise<InventoryItem> {
  // The list is read only up to the pet: the rest of the answer is never parsed, nor kept.
  for await (const batch of client.streamInventory()) {
    const current = batch.find((item) => item.petId === petId);
    if (current) return current;
  }
  // Found missing in the list the service answered with (200): no answer had the status 404.
  throw new PetinvError('notFound', `pet ${petId} not found in ${envName} (it is not in the inventory)`, {
    code: 'pet_not_found',
  });
}
