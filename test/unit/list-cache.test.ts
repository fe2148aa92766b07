import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/client';
import {
  createListCache,
  type ListCache,
  type ListCacheOptions,
  listCacheFile,
} from '../../src/client/list-cache';
import type { Transport } from '../../src/client/transport';
import { FaultyFiles } from '../helpers/faulty-files';
import { temporaryDirectory } from '../helpers/serve';

const BASE = 'http://127.0.0.1:4010/v1';
const BODY = '[{"petId":1,"quantity":2,"status":"sold"}]';
const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

function cacheIn(overrides: Partial<ListCacheOptions> = {}) {
  const root = temporaryDirectory('petinv-cache-test-');
  directories.push(root);
  const directory = join(root, 'petinv');
  const options = { directory, envName: 'local', baseUrl: BASE, maxBodyBytes: 1 << 20, ...overrides };
  return {
    cache: createListCache(options),
    directory,
    file: listCacheFile(directory, 'local', options.baseUrl),
  };
}

const bodyOf = (cache: ListCache) => {
  const entry = cache.open();
  try {
    return entry && { etag: entry.etag, body: Buffer.concat([...entry.chunks()]).toString('utf8') };
  } finally {
    entry?.close();
  }
};

/** Keeps `body` as the entry for `etag`, as a list read whole does. */
function store(cache: ListCache, etag: string, body: string) {
  const writer = cache.writer(etag);
  writer?.add(Buffer.from(body, 'utf8'));
  writer?.commit();
}

describe('the list cache', () => {
  it('keeps a body with its ETag, in a 0700 directory and a 0600 file, without the key', () => {
    const { cache, directory, file } = cacheIn();
    expect(cache.open()).toBeUndefined();
    store(cache, '"v1"', BODY);
    expect(bodyOf(cache)).toEqual({ etag: '"v1"', body: BODY });
    expect(statSync(directory).mode & 0o777).toBe(0o700);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(directory)).toEqual([file.slice(directory.length + 1)]);
    store(cache, '"v2"', '[]');
    expect(bodyOf(cache)).toEqual({ etag: '"v2"', body: '[]' });
  });

  it('ignores a corrupt or truncated entry, and the next answer replaces it', () => {
    const { cache, file } = cacheIn();
    store(cache, '"v1"', BODY);
    writeFileSync(file, readFileSync(file, 'utf8').slice(0, -5), { mode: 0o600 });
    expect(cache.open()).toBeUndefined();
    writeFileSync(file, 'garbage\n{', { mode: 0o600 });
    expect(cache.open()).toBeUndefined();
    writeFileSync(file, '', { mode: 0o600 });
    expect(cache.open()).toBeUndefined();
    store(cache, '"v2"', BODY);
    expect(bodyOf(cache)?.etag).toBe('"v2"');
  });

  it('serves an entry only to the base URL it came from', () => {
    const first = cacheIn();
    store(first.cache, '"v1"', BODY);
    const other = createListCache({
      directory: first.directory,
      envName: 'local',
      baseUrl: 'http://127.0.0.1:9999/v1',
      maxBodyBytes: 1 << 20,
    });
    expect(other.open()).toBeUndefined();
    // Even an entry copied under the other address's name is refused: its header names where it came from.
    writeFileSync(
      listCacheFile(first.directory, 'local', 'http://127.0.0.1:9999/v1'),
      readFileSync(first.file),
      {
        mode: 0o600,
      },
    );
    expect(other.open()).toBeUndefined();
  });

  it('never reads or writes through a symlink, and ignores files another user owns or may write', () => {
    const { cache, directory, file } = cacheIn();
    store(cache, '"v1"', BODY);
    const real = readFileSync(file);
    const target = join(directory, 'elsewhere');
    writeFileSync(target, real, { mode: 0o600 });
    rmSync(file);
    symlinkSync(target, file);
    expect(cache.open()).toBeUndefined();
    store(cache, '"v2"', '[]');
    // The link itself was replaced; the file it named is untouched.
    expect(readFileSync(target)).toEqual(real);
    expect(bodyOf(cache)?.etag).toBe('"v2"');

    chmodSync(file, 0o644);
    expect(cache.open()).toBeUndefined();
    chmodSync(file, 0o600);
    const stranger = createListCache({
      directory,
      envName: 'local',
      baseUrl: BASE,
      maxBodyBytes: 1 << 20,
      uid: 4242,
    });
    expect(stranger.open()).toBeUndefined();
    chmodSync(directory, 0o777);
    expect(cache.open()).toBeUndefined();
    store(cache, '"v3"', '[]');
    chmodSync(directory, 0o700);
    expect(bodyOf(cache)?.etag).toBe('"v2"');
  });

  it('ignores a FIFO or a directory at the entry name at once, rather than waiting on it', () => {
    const { cache, directory, file } = cacheIn();
    store(cache, '"v1"', BODY);
    rmSync(file);
    execFileSync('mkfifo', [file]);
    // Opening a FIFO to read would wait for a writer for ever.
    expect(cache.open()).toBeUndefined();
    rmSync(file);
    mkdirSync(file);
    expect(cache.open()).toBeUndefined();
    expect(readdirSync(directory).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('drops a write that fails (a full disk) without leaving a temporary file or touching the entry', () => {
    const files = new FaultyFiles();
    const { cache, directory } = cacheIn({ files });
    store(cache, '"v1"', BODY);
    const before = readdirSync(directory);
    files.spaceLeft = 10;
    expect(() => store(cache, '"v2"', '[]'.padEnd(100, ' '))).not.toThrow();
    expect(readdirSync(directory)).toEqual(before);
    expect(bodyOf(cache)?.etag).toBe('"v1"');
  });

  it('does not use an entry larger than the answer limit, nor keep an ETag it could not send back', () => {
    const { cache } = cacheIn({ maxBodyBytes: 10 });
    store(cache, '"v1"', BODY);
    expect(cache.open()).toBeUndefined();
    const second = cacheIn();
    store(second.cache, '"with\nnewline"', BODY);
    expect(existsSync(second.file)).toBe(false);
  });
});

describe('a cache directory that cannot be made', () => {
  it("is skipped at once: under /proc, Node's recursive mkdir would never return", () => {
    const cache = createListCache({
      directory: '/proc/petinv-no-such-dir/petinv',
      envName: 'local',
      baseUrl: BASE,
      maxBodyBytes: 1 << 20,
    });
    expect(cache.writer('"v1"')).toBeUndefined();
    expect(cache.open()).toBeUndefined();
  });
});

describe('the client with a list cache', () => {
  const item = (petId: number) => `{"petId":${petId},"quantity":1,"status":"sold"}`;

  it('reuses the cached body on a 304, and asks again in full when that body no longer parses', async () => {
    const { cache, file } = cacheIn();
    const asked: (string | undefined)[] = [];
    let current = { etag: '"a"', body: `[${item(1)}]` };
    const transport: Transport = async (request) => {
      const etag = request.headers['If-None-Match'];
      asked.push(etag);
      if (etag === current.etag) return { status: 304, header: () => null, text: '' };
      const { etag: sent, body } = current;
      return { status: 200, header: (name) => (name === 'etag' ? sent : null), text: body };
    };
    const client = createClient({ baseUrl: BASE, apiKey: 'key', transport, listCache: cache });
    const petIds = async () => (await client.listInventory()).map((listed) => Number(listed.petId));
    expect(await petIds()).toEqual([1]);
    expect(await petIds()).toEqual([1]);
    current = { etag: '"b"', body: `[${item(2)}]` };
    expect(await petIds()).toEqual([2]);
    // Same length, so only the parse can tell.
    writeFileSync(file, readFileSync(file, 'utf8').replace(`[${item(2)}]`, `[${item(2)},`), { mode: 0o600 });
    expect(await petIds()).toEqual([2]);
    expect(asked).toEqual([undefined, '"a"', '"a"', '"b"', undefined]);
    expect(bodyOf(cache)).toEqual({ etag: '"b"', body: `[${item(2)}]` });
  });

  it('keeps a body only once it was read whole: a list stopped early keeps the old entry', async () => {
    const { cache } = cacheIn();
    store(cache, '"old"', `[${item(1)}]`);
    const body = `[${Array.from({ length: 5000 }, (_, index) => item(index + 1)).join(',')}]`;
    const transport: Transport = async () => ({
      status: 200,
      header: (name) => (name === 'etag' ? '"new"' : null),
      text: body,
    });
    const client = createClient({ baseUrl: BASE, apiKey: 'key', transport, listCache: cache });
    for await (const _batch of client.streamInventory()) break;
    expect(bodyOf(cache)?.etag).toBe('"old"');
    expect((await client.listInventory()).length).toBe(5000);
    expect(bodyOf(cache)).toEqual({ etag: '"new"', body });
  });
});
