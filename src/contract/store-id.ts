/** The header by which serve names its store (an id kept with its data): histories are filed by store, not address. */
export const STORE_HEADER = 'Petinv-Store';

/** A store id a client may file its history under: letters, digits, - and _, so it can name no other path. */
export const isStoreId = (text: string | null | undefined): text is string =>
  typeof text === 'string' && /^[A-Za-z0-9_-]{8,64}$/.test(text);

/**
 * A request header petinv serve honours on PATCH: the update is applied only if the pet holds this
 * quantity when its turn comes (in the order updates arrive); otherwise nothing changes and the answer is
 * 412 quantity_changed, with the quantity the pet holds in QUANTITY_HEADER. The spec's service has no
 * conditional PATCH; a client sends it only to a service that said it is a petinv serve (STORE_HEADER).
 */
export const IF_QUANTITY_HEADER = 'Petinv-If-Quantity';
export const QUANTITY_HEADER = 'Petinv-Quantity';
