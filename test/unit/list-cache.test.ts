import {
  chmodSync,
  existsSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createListCache,
  type ListCacheOptions,
  listCacheFile,
  listThroughCache,
} from '../../src/api/list-cache';
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

const bodyOf = (cache: ReturnType<typeof createListCache>) => {
  const entry = cache.open();
  try {
    return entry && { etag: entry.etag, body: entry.readBody() };
  } finally {
    entry?.close();
  }
};

describe('the list cache', () => {
  it('keeps a body with its ETag, in a 0700 directory and a 0600 file, without the key', () => {
    const { cache, directory, file } = cacheIn();
    expect(cache.open()).toBeUndefined();
    cache.store('"v1"', BODY);
    expect(bodyOf(cache)).toEqual({ etag: '"v1"', body: BODY });
    expect(statSync(directory).mode & 0o777).toBe(0o700);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(directory)).toEqual([file.slice(directory.length + 1)]);
    cache.store('"v2"', '[]');
    expect(bodyOf(cache)).toEqual({ etag: '"v2"', body: '[]' });
  });

  it('ignores a corrupt or truncated entry, and the next answer replaces it', () => {
    const { cache, file } = cacheIn();
    cache.store('"v1"', BODY);
    writeFileSync(file, readFileSync(file, 'utf8').slice(0, -5), { mode: 0o600 });
    expect(cache.open()).toBeUndefined();
    writeFileSync(file, 'garbage\n{', { mode: 0o600 });
    expect(cache.open()).toBeUndefined();
    writeFileSync(file, '', { mode: 0o600 });
    expect(cache.open()).toBeUndefined();
    cache.store('"v2"', BODY);
    expect(bodyOf(cache)?.etag).toBe('"v2"');
  });

  it('serves an entry only to the base URL it came from', () => {
    const first = cacheIn();
    first.cache.store('"v1"', BODY);
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
    cache.store('"v1"', BODY);
    const real = readFileSync(file);
    const target = join(directory, 'elsewhere');
    writeFileSync(target, real, { mode: 0o600 });
    rmSync(file);
    symlinkSync(target, file);
    expect(cache.open()).toBeUndefined();
    cache.store('"v2"', '[]');
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
    cache.store('"v3"', '[]');
    chmodSync(directory, 0o700);
    expect(bodyOf(cache)?.etag).toBe('"v2"');
  });

  it('drops a write that fails (a full disk) without leaving a temporary file or touching the entry', () => {
    const files = new FaultyFiles();
    const { cache, directory } = cacheIn({ files });
    cache.store('"v1"', BODY);
    const before = readdirSync(directory);
    files.spaceLeft = 10;
    expect(() => cache.store('"v2"', '[]'.padEnd(100, ' '))).not.toThrow();
    expect(readdirSync(directory)).toEqual(before);
    expect(bodyOf(cache)?.etag).toBe('"v1"');
  });

  it('does not use an entry larger than the answer limit, nor keep an ETag it could not send back', () => {
    const { cache } = cacheIn({ maxBodyBytes: 10 });
    cache.store('"v1"', BODY);
    expect(cache.open()).toBeUndefined();
    const second = cacheIn();
    second.cache.store('"with\nnewline"', BODY);
    expect(existsSync(second.file)).toBe(false);
  });
});

describe('listThroughCache', () => {
  const parse = (body: string) => JSON.parse(body) as unknown[];

  it('reuses the cached body on a 304, and asks again in full when that body no longer parses', async () => {
    const { cache, file } = cacheIn();
    const asked: (string | undefined)[] = [];
    let current = { etag: '"a"', body: '[1]' };
    const fetchList = async (etag?: string) => {
      asked.push(etag);
      if (etag === current.etag) return { changed: false as const };
      return { changed: true as const, items: parse(current.body), etag: current.etag, body: current.body };
    };
    expect(await listThroughCache(cache, fetchList, parse)).toEqual([1]);
    expect(await listThroughCache(cache, fetchList, parse)).toEqual([1]);
    current = { etag: '"b"', body: '[2]' };
    expect(await listThroughCache(cache, fetchList, parse)).toEqual([2]);
    // Same length, so only the parse can tell.
    writeFileSync(file, readFileSync(file, 'utf8').replace('[2]', '[2,'), { mode: 0o600 });
    expect(await listThroughCache(cache, fetchList, parse)).toEqual([2]);
    expect(asked).toEqual([undefined, '"a"', '"a"', '"b"', undefined]);
    expect(bodyOf(cache)).toEqual({ etag: '"b"', body: '[2]' });
  });
});
