import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { join } from 'node:path';
import {
  CREATE_EXCLUSIVE,
  type FileSystem,
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
  /** Forgets the entry: its body did not parse. */
  drop(): void;
}

export interface CachedList {
  etag: string;
  /** The cached body, read from the file opened by `open` (a concurrent replacement does not change it). */
  readBody(): string;
  close(): void;
}

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
        fs.mkdirSync(directory, { recursive: true, mode: 0o700 });
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
          close: () => fs.closeSync(fd),
        };
      } catch {
        fs.closeSync(fd);
        return undefined;
      }
    },

    store(etag, body) {
      if (!isCacheableEtag(etag) || !usableDirectory(true)) return;
      const bytes = Buffer.from(body, 'utf8');
      const header = `${JSON.stringify({ format: FORMAT, baseUrl, etag, bytes: bytes.length })}\n`;
      // Written whole under a fresh name, created exclusively (never through a planted symlink), then renamed
      // over the entry: a reader sees the old entry or the new one, never half of one.
      const temporary = join(directory, `.list-${randomBytes(8).toString('hex')}.tmp`);
      let fd: number | undefined;
      try {
        fd = files.openSync(temporary, CREATE_EXCLUSIVE, 0o600);
        writeFully(files, fd, Buffer.from(header, 'utf8'));
        writeFully(files, fd, bytes);
        files.closeSync(fd);
        fd = undefined;
        files.renameSync(temporary, path);
      } catch {
        if (fd !== undefined) files.closeSync(fd);
        try {
          files.unlinkSync(temporary);
        } catch {
          // Never created, or already gone.
        }
      }
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

/** What a conditional GET /inventory found: the items and what to cache, or that the cached ones still hold. */
export type ListAnswer<Item> =
  | { changed: false }
  | { changed: true; items: Item[]; etag: string | null; body: string };

/**
 * The list through the cache: asks with the cached ETag, reuses the cached body (through the same parser)
 * on a 304, and keeps a new body that came with an ETag. A cached body that no longer parses is dropped
 * and the list asked for again, unconditionally.
 */
export async function listThroughCache<Item>(
  cache: ListCache | undefined,
  fetchList: (etag?: string) => Promise<ListAnswer<Item>>,
  parse: (body: string) => Item[],
): Promise<Item[]> {
  const cached = cache?.open();
  try {
    let answer = await fetchList(cached?.etag);
    if (!answer.changed) {
      try {
        return parse((cached as CachedList).readBody());
      } catch {
        cache?.drop();
        answer = await fetchList();
        if (!answer.changed) throw new Error('unreachable: an unconditional request answered 304');
      }
    }
    if (cache && isCacheableEtag(answer.etag)) cache.store(answer.etag, answer.body);
    return answer.items;
  } finally {
    cached?.close();
  }
}
