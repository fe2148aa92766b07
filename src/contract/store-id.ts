/**
 * The response header by which petinv serve says which store it serves: an id made once and kept with its
 * data, so that a client files its history of writes by store, not by the address serve happens to use.
 */
export const STORE_HEADER = 'Petinv-Store';

/** A store id a client may file its history under: letters, digits, - and _, so it can name no other path. */
export const isStoreId = (text: string | null | undefined): text is string =>
  typeof text === 'string' && /^[A-Za-z0-9_-]{8,64}$/.test(text);
