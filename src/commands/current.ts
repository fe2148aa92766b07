import type { InventoryClient } from '../client/client';
import type { InventoryItem } from '../contract/schemas';
import { PetinvError } from '../errors';

/** The current item of one pet, read from the inventory; a pet that is not there is a 404 as a write would be. */
export async function readCurrent(
  client: InventoryClient,
  petId: bigint,
  envName: string,
): Promise<InventoryItem> {
  const current = await client.findInventoryItem(petId);
  if (current) return current;
  // Found missing in the list the service answered with (200): no answer had the status 404.
  throw new PetinvError('notFound', `pet ${petId} not found in ${envName} (it is not in the inventory)`, {
    code: 'pet_not_found',
  });
}
