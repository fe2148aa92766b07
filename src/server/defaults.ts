/** serve's defaults, which its declarations show in help: a leaf, read without loading the server. */

export const DEFAULT_SEED_COUNT = 12;
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** Far below the usual file-descriptor limits, far above what one machine's scripts open. */
export const DEFAULT_MAX_CONNECTIONS = 1024;
/** A quarter of the total, left to one client (an address, an IPv6 /64): a bulk run's highest --concurrency. */
export const DEFAULT_MAX_CONNECTIONS_PER_CLIENT = 256;
