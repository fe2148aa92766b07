import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { join } from 'node:path';
import {
  CREATE_EXCLUSIVE,
  type FileSystem,
  makeDirectories,
  nodeFileSystem,
  READ_NO_FOLLOW,
  writeFully,
} from '../files/file-system';

/**
 * The last list body of one environment and base URL, with its ETag, kept on disk so that the next read
 * of the list can ask the service "has it changed?" (If-None-Match) and reuse the body on a 304. It is only
 * ever used after the service has said so: petinv never prints a stale list without asking.
 *
 * A cache is a convenience, never a reason to fail: an entry that is missing, corrupt, too large, reached
 * through a symlink, or not the user's own is ignored (and replaced by the next answer), and a write that
 * fails (a full disk, a read-only directory) is dropped silently. The entry holds the list and the address
 * it came from, never the API key.
 */
export interface ListCache {
  /** The entry for this environment and base URL, opened now; undefined when there is none usable. */
  open(): CachedList | undefined;
  /** Replaces the entry with a body the service sent with this ETag. */
  store(etag: string, body: string): void;
  /**
   * A new entry for a body the service is sending with this ETag, written as it arrives; it replaces the
   * entry only at `commit`, once the body was read whole and valid. Undefined when nothing can be kept.
   */
  writer(etag: string): CacheWriter | undefined;
  /** Forgets the entry: its body did not parse. */
  drop(): void;
}

export interface CachedList {
  etag: string;
  /** The cached body, read from the file opened by `open` (a concurrent replacement does not change it). */
  readBody(): string;
  /** The same, a piece at a time, for a reader that parses as it goes. */
  chunks(): Iterable<Uint8Array>;
  close(): void;
}

export interface CacheWriter {
  add(chunk: Uint8Array): void;
  /** Keeps what was added as the entry. */
  commit(): void;
  /** Forgets what was added; the entry stays as it was. Does nothing after commit. */
  abort(): void;
}

/** The chunks of `body` as they pass, each also added to `writer`. */
export async function* copiedInto(
  body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  writer: CacheWriter,
): AsyncGenerator<Uint8Array, void, undefined> {
  for await (const chunk of body) {
    writer.add(chunk);
    yield chunk;
  }
}

/** How much of a kept body is read at a time. */
const READ_CHUNK_BYTES = 64 * 1024;

export interface ListCacheOptions {
  directory: string;
  envName: string;
  baseUrl: string;
  /** A cached body larger than the limit the answer would have is not used. */
  maxBodyBytes: number;
  files?: FileSystem;
  /** Whose files are trusted: the process's own user by default. */
  uid?: number;
}

const FORMAT = 'petinv list cache 1';
/** The header line (format, base URL, ETag, body length) is read in one go; longer is not ours. */
const MAX_HEADER_BYTES = 16 * 1024;
/** An ETag petinv can send back as it came: visible ASCII, bounded. */
const SENDABLE_ETAG = /^[\x21-\x7e]{1,1024}$/;

export function isCacheableEtag(etag: string | null | undefined): etag is string {
  return typeof etag === 'string' && SENDABLE_ETAG.test(etag);
}

/** The file of one environment and base URL: the environment's name (letters, digits, - and _) and a hash. */
export function listCacheFile(directory: string, envName: string, baseUrl: string): string {
  const hash = createHash('sha256').update(baseUrl).digest('hex').slice(0, 16);
  return join(directory, `list-${envName}-${hash}.json`);
}

interface Header {
  format: string;
  baseUrl: string;
  etag: string;
  bytes: number;
}

function readHeader(fd: number, size: number): { header: Header; bodyStart: number } | undefined {
  const head = Buffer.alloc(Math.min(size, MAX_HEADER_BYTES));
  const read = fs.readSync(fd, head, 0, head.length, 0);
  const newline = head.subarray(0, read).indexOf(10);
  if (newline < 0) return undefined;
  try {
    const header = JSON.parse(head.subarray(0, newline).toString('utf8')) as Partial<Header>;
    if (
      header?.format !== FORMAT ||
      typeof header.baseUrl !== 'string' ||
      !isCacheableEtag(header.etag) ||
      header.bytes !== size - newline - 1
    )
      return undefined;
    return { header: header as Header, bodyStart: newline + 1 };
  } catch {
    return undefined;
  }
}

export function createListCache(options: ListCacheOptions): ListCache {
  const { directory, baseUrl, maxBodyBytes } = options;
  const files = options.files ?? nodeFileSystem;
  const uid = options.uid ?? process.getuid?.() ?? 0;
  const path = listCacheFile(directory, options.envName, baseUrl);
  // Only the user's own files, writable by nobody else: another user's could be planted, or changed under us.
  const trusted = (stat: fs.Stats) => stat.uid === uid && (stat.mode & 0o022) === 0;

  /** The directory, made 0700 if missing; false when it is not a directory the user alone controls. */
  function usableDirectory(create: boolean): boolean {
    try {
      const stat = fs.lstatSync(directory, { throwIfNoEntry: false });
      if (!stat) {
        if (!create) return false;
        // Not Node 20's recursive mkdirSync, which never returns for a path it cannot make (under /proc).
        makeDirectories(directory, 0o700);
        return usableDirectory(false);
      }
      return stat.isDirectory() && trusted(stat);
    } catch {
      return false;
    }
  }

  return {
    open() {
      if (!usableDirectory(false)) return undefined;
      let fd: number;
      try {
        fd = fs.openSync(path, READ_NO_FOLLOW);
      } catch {
        return undefined;
      }
      try {
        const stat = fs.fstatSync(fd);
        const entry =
          stat.isFile() && trusted(stat) && (stat.mode & 0o077) === 0 ? readHeader(fd, stat.size) : undefined;
        if (!entry || entry.header.baseUrl !== baseUrl || entry.header.bytes > maxBodyBytes) {
          fs.closeSync(fd);
          return undefined;
        }
        const { header, bodyStart } = entry;
        let closed = false;
        return {
          etag: header.etag,
          readBody() {
            const body = Buffer.allocUnsafe(header.bytes);
            let offset = 0;
            while (offset < header.bytes) {
              const read = fs.readSync(fd, body, offset, header.bytes - offset, bodyStart + offset);
              if (read === 0) throw new Error('the cached list ends early');
              offset += read;
            }
            return body.toString('utf8');
          },
          *chunks() {
            for (let offset = 0; offset < header.bytes; ) {
              const piece = Buffer.allocUnsafe(Math.min(READ_CHUNK_BYTES, header.bytes - offset));
              const read = fs.readSync(fd, piece, 0, piece.length, bodyStart + offset);
              if (read === 0) throw new Error('the cached list ends early');
              offset += read;
              yield piece.subarray(0, read);
            }
          },
          close() {
            if (closed) return;
            closed = true;
            fs.closeSync(fd);
          },
        };
      } catch {
        fs.closeSync(fd);
        return undefined;
      }
    },

    store(etag, body) {
      const writer = this.writer(etag);
      if (!writer) return;
      writer.add(Buffer.from(body, 'utf8'));
      writer.commit();
    },

    writer(etag) {
      if (!isCacheableEtag(etag) || !usableDirectory(true)) return undefined;
      // The header comes first but holds the body's length: a line of spaces as long as the longest header
      // is written first, and the header over it at commit (JSON allows the spaces left after it).
      const headerFor = (bytes: number) =>
        Buffer.from(JSON.stringify({ format: FORMAT, baseUrl, etag, bytes }), 'utf8');
      const headerLength = headerFor(Number.MAX_SAFE_INTEGER).length;
      // Written under a fresh name, created exclusively (never through a planted symlink), then renamed over
      // the entry: a reader sees the old entry or the new one, never half of one.
      const temporary = join(directory, `.list-${randomBytes(8).toString('hex')}.tmp`);
      let fd: number | undefined;
      let bytes = 0;
      const abort = () => {
        if (fd === undefined) return;
        try {
          files.closeSync(fd);
          files.unlinkSync(temporary);
        } catch {
          // Already gone.
        }
        fd = undefined;
      };
      try {
        fd = files.openSync(temporary, CREATE_EXCLUSIVE, 0o600);
        writeFully(files, fd, Buffer.from(`${' '.repeat(headerLength)}\n`, 'utf8'));
      } catch {
        abort();
        return undefined;
      }
      // A failed write (a full disk, say) forgets the entry and the rest of the body: the list goes on.
      return {
        add(chunk) {
          if (fd === undefined) return;
          bytes += chunk.length;
          try {
            if (bytes > maxBodyBytes) throw new Error('larger than the answer may be');
            writeFully(files, fd, chunk);
          } catch {
            abort();
          }
        },
        commit() {
          if (fd === undefined) return;
          try {
            writeFully(files, fd, headerFor(bytes), 0);
            files.closeSync(fd);
            fd = undefined;
            files.renameSync(temporary, path);
          } catch {
            abort();
            try {
              files.unlinkSync(temporary);
            } catch {
              // Never renamed, or already gone.
            }
          }
        },
        abort,
      };
    },

    drop() {
      try {
        if (usableDirectory(false)) files.unlinkSync(path);
      } catch {
        // Nothing to forget.
      }
    },
  };
}
