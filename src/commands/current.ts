import type { InventoryClient } from '../client/client';
import { PetinvError } from '../errors';

/** The current item of one pet, read from the inventory; a pet that is not there is a 404 as a write would be. */
export async function readCurrent(client: InventoryClient, petId: bigint, envName: string) {
  const current = await client.findInventoryItem(petId);
  if (current) return current;
  // Found missing in the list the service answered with (200): no answer had the status 404.
  throw new PetinvError('notFound', `pet ${petId} not found in ${envName} (it is not in the inventory)`, {
    code: 'pet_not_found',
  });
}

/**
 * A dry run applies the rules it knows the service applies: a service that said which store it is is a
 * petinv serve (src/contract/store-id.ts), which refuses a negative quantity with 400, as the write would.
 */
export function rehearseServeRules(client: InventoryClient, petId: bigint, quantity: number, where: string) {
  if (quantity < 0 && client.storeId !== undefined)
    throw new PetinvError(
      'rejected',
      `dry run: ${where} (a petinv serve) refuses a negative quantity (${quantity}) for pet ${petId}; nothing was written`,
      { code: 'invalid_body', status: 400 },
    );
}
