/**
 * What `petinv serve` uses when no option says otherwise: the server's own defaults, which the CLI's
 * declarations show in help. A leaf, so that the program reads them without loading the server.
 */

export const DEFAULT_SEED_COUNT = 12;
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** Far below the usual file-descriptor limits, far above what one machine's scripts open. */
export const DEFAULT_MAX_CONNECTIONS = 1024;
/**
 * A quarter of the total: one client (an address; an IPv6 /64) holding connections open, idle or sending
 * its headers slowly, leaves the other three quarters to everyone else. As many as petinv's own bulk run
 * opens at its highest --concurrency.
 */
export const DEFAULT_MAX_CONNECTIONS_PER_CLIENT = 256;
