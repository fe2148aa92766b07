import { closeSync, fstatSync, lstatSync, openSync, readSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { type AtomicFile, createAtomicFile } from '../files/atomic-write';
import {
  type FileSystem,
  makeDirectories,
  nodeFileSystem,
  quietly,
  READ_NO_FOLLOW,
  tryOr,
} from '../files/file-system';

/** An entry on disk: a JSON header line (format, base URL, ETag, body length), padded, then the body as sent. */
export interface CachedList {
  etag: string;
  /** The body a piece at a time, from the file `open` opened (a replacement since does not change it). */
  chunks(): Iterable<Uint8Array>;
  close(): void;
}

const READ_CHUNK_BYTES = 64 * 1024;

const FORMAT = 'petinv list cache 1';
/** The header line (format, base URL, ETag, body length) is read in one go; longer is not ours. */
const MAX_HEADER_BYTES = 16 * 1024;
/** An ETag petinv can send back as it came: visible ASCII, bounded. */
const SENDABLE_ETAG = /^[\x21-\x7e]{1,1024}$/;

function isCacheableEtag(etag: unknown): etag is string {
  return typeof etag === 'string' && SENDABLE_ETAG.test(etag);
}

/**
 * The entry in the file `fd` (`size` bytes) when its header is ours, for `baseUrl`, and its body whole and
 * at most `maxBytes`; else undefined. Read from `fd`, so a concurrent replacement of the file changes nothing.
 */
function readEntry(fd: number, size: number, baseUrl: string, maxBytes: number): CachedList | undefined {
  const head = Buffer.alloc(Math.min(size, MAX_HEADER_BYTES));
  const newline = head.subarray(0, readSync(fd, head, 0, head.length, 0)).indexOf(10);
  if (newline < 0) return undefined;
  // Not JSON (undefined), or null: not ours either.
  type Header = { format?: unknown; baseUrl?: unknown; etag?: unknown; bytes?: unknown } | null | undefined;
  const header: Header = tryOr(() => JSON.parse(head.subarray(0, newline).toString('utf8')), undefined);
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

function entryHeader(baseUrl: string, etag: string, bytes: number): Buffer {
  return Buffer.from(JSON.stringify({ format: FORMAT, baseUrl, etag, bytes }), 'utf8');
}

export interface CacheWriter {
  add(chunk: Uint8Array): void;
  commit(): void;
  /** Forgets what was added; the entry stays as it was. Does nothing after commit. */
  abort(): void;
}

export async function* copiedInto(
  body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  writer: CacheWriter,
): AsyncGenerator<Uint8Array, void, undefined> {
  for await (const chunk of body) {
    writer.add(chunk);
    yield chunk;
  }
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

/**
 * 64-bit FNV-1a of the text's UTF-16 code units, for a file name only (an entry is checked against the base
 * URL it names inside); a cryptographic hash would load node:crypto at every start for nothing.
 */
function fnv1a64(text: string): string {
  let hash = 0xcbf29ce484222325n;
  for (let i = 0; i < text.length; i++) {
    hash ^= BigInt(text.charCodeAt(i));
    hash = (hash * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return hash.toString(16).padStart(16, '0');
}

/** The file of one environment and base URL: the environment's name (letters, digits, - and _) and a hash. */
export function listCacheFile(directory: string, envName: string, baseUrl: string): string {
  return join(directory, `list-${envName}-${fnv1a64(baseUrl)}.json`);
}

/**
 * The last list body of one environment and base URL with its ETag, reused only on the service's 304. A
 * convenience, never a reason to fail: an entry missing, corrupt, too large, behind a symlink or not the
 * user's own is ignored, a failed write dropped. It holds the list and its address, never the API key.
 */
export class ListCache {
  private readonly files: FileSystem;
  private readonly uid: number;
  private readonly path: string;

  constructor(private readonly options: ListCacheOptions) {
    this.files = options.files ?? nodeFileSystem;
    this.uid = options.uid ?? process.getuid?.() ?? 0;
    this.path = listCacheFile(options.directory, options.envName, options.baseUrl);
  }

  /** Only the user's own files, writable by nobody else: another user's could be planted, or changed under us. */
  private trusted(stat: Stats): boolean {
    return stat.uid === this.uid && (stat.mode & 0o022) === 0;
  }

  /** The directory, made 0700 if missing; false when it is not a directory the user alone controls. */
  private usableDirectory(create: boolean): boolean {
    const { directory } = this.options;
    return tryOr(() => {
      const stat = lstatSync(directory, { throwIfNoEntry: false });
      if (!stat) {
        if (!create) return false;
        makeDirectories(directory, 0o700);
        return this.usableDirectory(false);
      }
      return stat.isDirectory() && this.trusted(stat);
    }, false);
  }

  /** The entry for this environment and base URL, opened now; undefined when there is none usable. */
  open(): CachedList | undefined {
    if (!this.usableDirectory(false)) return undefined;
    const fd = tryOr(() => openSync(this.path, READ_NO_FOLLOW), undefined);
    if (fd === undefined) return undefined;
    try {
      const stat = fstatSync(fd);
      const entry =
        stat.isFile() && this.trusted(stat) && (stat.mode & 0o077) === 0
          ? readEntry(fd, stat.size, this.options.baseUrl, this.options.maxBodyBytes)
          : undefined;
      if (entry) return entry;
    } catch {
      // Unreadable: as good as none.
    }
    closeSync(fd);
    return undefined;
  }

  /**
   * A new entry for a body the service is sending with this ETag, written as it arrives; it replaces the
   * entry only at `commit`, once the body was read whole and valid. Undefined when nothing can be kept.
   */
  writer(etag: string): CacheWriter | undefined {
    if (!isCacheableEtag(etag) || !this.usableDirectory(true)) return undefined;
    const { baseUrl, maxBodyBytes } = this.options;
    // The header comes first but holds the body's length: a line of spaces as long as the longest header
    // is written first, and the header over it at commit (JSON allows the spaces left after it).
    const headerLength = entryHeader(baseUrl, etag, Number.MAX_SAFE_INTEGER).length;
    let file: AtomicFile | undefined;
    let bytes = 0;
    const abort = () => {
      file?.abort();
      file = undefined;
    };
    try {
      file = createAtomicFile(this.path, {
        files: this.files,
        mode: 0o600,
        temporaryName: (random) => `.list-${random}.tmp`,
      });
      file.write(Buffer.from(`${' '.repeat(headerLength)}\n`, 'utf8'));
    } catch {
      abort();
      return undefined;
    }
    // A failed write (a full disk, say) forgets the entry and the rest of the body: the list goes on.
    return {
      add(chunk) {
        if (file === undefined) return;
        bytes += chunk.length;
        try {
          if (bytes > maxBodyBytes) throw new Error('larger than the answer may be');
          file.write(chunk);
        } catch {
          abort();
        }
      },
      commit() {
        if (file === undefined) return;
        try {
          file.write(entryHeader(baseUrl, etag, bytes), 0);
          file.commitSync();
        } catch {
          // The temporary file went with the failure; the old entry stays.
        }
        file = undefined;
      },
      abort,
    };
  }

  /** Forgets the entry: its body did not parse. */
  drop(): void {
    if (this.usableDirectory(false)) quietly(() => this.files.unlinkSync(this.path));
  }
}

export const createListCache = (options: ListCacheOptions) => new ListCache(options);
