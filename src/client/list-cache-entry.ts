import { closeSync, readSync } from 'node:fs';

/**
 * One list cache entry on disk: a header line (JSON: format, base URL, ETag, body length), padded with
 * spaces, then the body exactly as the service sent it. See list-cache.ts for when an entry is trusted.
 */

export interface CachedList {
  etag: string;
  /** The body a piece at a time, from the file `open` opened (a replacement since does not change it). */
  chunks(): Iterable<Uint8Array>;
  close(): void;
}

/** How much of a kept body is read at a time. */
const READ_CHUNK_BYTES = 64 * 1024;

const FORMAT = 'petinv list cache 1';
/** The header line (format, base URL, ETag, body length) is read in one go; longer is not ours. */
const MAX_HEADER_BYTES = 16 * 1024;
/** An ETag petinv can send back as it came: visible ASCII, bounded. */
const SENDABLE_ETAG = /^[\x21-\x7e]{1,1024}$/;

export function isCacheableEtag(etag: unknown): etag is string {
  return typeof etag === 'string' && SENDABLE_ETAG.test(etag);
}

/**
 * The entry in the file `fd` (`size` bytes) when its header is ours, for `baseUrl`, and its body whole and
 * at most `maxBytes`; else undefined. Read from `fd`, so a concurrent replacement of the file changes nothing.
 */
export function readEntry(
  fd: number,
  size: number,
  baseUrl: string,
  maxBytes: number,
): CachedList | undefined {
  const head = Buffer.alloc(Math.min(size, MAX_HEADER_BYTES));
  const newline = head.subarray(0, readSync(fd, head, 0, head.length, 0)).indexOf(10);
  if (newline < 0) return undefined;
  let header: { format?: unknown; baseUrl?: unknown; etag?: unknown; bytes?: unknown } | null;
  try {
    header = JSON.parse(head.subarray(0, newline).toString('utf8'));
  } catch {
    return undefined;
  }
  const bytes = size - newline - 1;
  if (
    header?.format !== FORMAT ||
    header.baseUrl !== baseUrl ||
    !isCacheableEtag(header.etag) ||
    header.bytes !== bytes ||
    bytes > maxBytes
  )
    return undefined;
  let closed = false;
  return {
    etag: header.etag,
    *chunks() {
      for (let offset = 0; offset < bytes; ) {
        const piece = Buffer.allocUnsafe(Math.min(READ_CHUNK_BYTES, bytes - offset));
        const read = readSync(fd, piece, 0, piece.length, newline + 1 + offset);
        if (read === 0) throw new Error('the cached list ends early');
        offset += read;
        yield piece.subarray(0, read);
      }
    },
    close() {
      if (closed) return;
      closed = true;
      closeSync(fd);
    },
  };
}

export function entryHeader(baseUrl: string, etag: string, bytes: number): Buffer {
  return Buffer.from(JSON.stringify({ format: FORMAT, baseUrl, etag, bytes }), 'utf8');
}
