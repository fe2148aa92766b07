/**
 * The client's defaults and the size format of its messages. They live apart from the client so that the
 * CLI's option declarations can show them in help without loading the client (and zod) at every start.
 */

export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_RETRIES = 3;
/** About 5 million pets at about 50 bytes each, and well below the longest string V8 can hold (512 MiB). */
export const DEFAULT_MAX_BODY_BYTES = 256 * 1024 * 1024;
export const DEFAULT_MAX_RETRY_WAIT_MS = 60_000;

/** 268435456 as "256 MiB", for messages. */
export function formatBytes(bytes: number): string {
  for (const [unit, size] of [
    ['GiB', 2 ** 30],
    ['MiB', 2 ** 20],
    ['KiB', 2 ** 10],
  ] as const)
    if (bytes >= size && bytes % size === 0) return `${bytes / size} ${unit}`;
  return `${bytes} bytes`;
}
