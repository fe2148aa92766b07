import { readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  createAtomicFile,
  moveDurably,
  syncDirectory,
  writeFileAtomic,
  writeFileAtomicSync,
} from '../../src/files/atomic-write';
import { FaultyFiles } from '../helpers/faulty-files';
import { temporaryDirectory } from '../helpers/serve';

/**
 * The one atomic writer every file of petinv goes through (the snapshot, the config file, serve's records,
 * the list cache, the launcher's code): one set of fault tests for all of them.
 */

const OLD = 'the old content, whole\n';

/** A directory holding `file` with the old content; what else is in it afterwards shows leftovers. */
function fileWithOldContent() {
  const directory = temporaryDirectory();
  const path = join(directory, 'file.json');
  writeFileSync(path, OLD);
  return { directory, path, names: () => readdirSync(directory).sort() };
}

const bytes = (text: string) => Buffer.from(text, 'utf8');

describe('writeFileAtomic', () => {
  it('replaces the file with the new content, in the mode asked for, and leaves no temporary file', async () => {
    const { path, names } = fileWithOldContent();
    await writeFileAtomic(path, [bytes('new '), bytes('content')], { mode: 0o640 });
    expect(readFileSync(path, 'utf8')).toBe('new content');
    expect(statSync(path).mode & 0o777).toBe(0o640 & ~process.umask());
    expect(names()).toEqual(['file.json']);
  });

  it('creates a file that did not exist, private by default', () => {
    const path = join(temporaryDirectory(), 'new.json');
    writeFileAtomicSync(path, '{"a":1}');
    expect(readFileSync(path, 'utf8')).toBe('{"a":1}');
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('finishes short writes: every byte arrives however few each write takes', async () => {
    const { path } = fileWithOldContent();
    const files = new FaultyFiles();
    files.maxWrite = 3;
    const text = `${'x'.repeat(1000)}the end`;
    await writeFileAtomic(path, text, { files });
    expect(readFileSync(path, 'utf8')).toBe(text);
    expect(files.calls.write).toBeGreaterThanOrEqual(Math.ceil(text.length / 3));
  });

  it('on a full disk (ENOSPC) throws, keeps the old file whole and leaves no temporary file', async () => {
    const { path, names } = fileWithOldContent();
    const files = new FaultyFiles();
    files.spaceLeft = 100;
    await expect(writeFileAtomic(path, 'y'.repeat(1000), { files, fsync: true })).rejects.toMatchObject({
      code: 'ENOSPC',
    });
    expect(readFileSync(path, 'utf8')).toBe(OLD);
    expect(names()).toEqual(['file.json']);
    expect(files.calls.rename).toBe(0);
  });

  it('fsyncs the new file before the rename when asked, and not otherwise', async () => {
    const { path } = fileWithOldContent();
    const durable = new FaultyFiles();
    await writeFileAtomic(path, 'durable', { files: durable, fsync: true });
    expect([durable.calls.sync, durable.calls.rename]).toEqual([1, 1]);
    const durableSync = new FaultyFiles();
    writeFileAtomicSync(path, 'durable, synchronously', { files: durableSync, fsync: true });
    expect([durableSync.calls.sync, durableSync.calls.rename]).toEqual([1, 1]);
    const cache = new FaultyFiles();
    writeFileAtomicSync(path, 'a cache', { files: cache });
    expect([cache.calls.sync, cache.calls.rename]).toEqual([0, 1]);
    expect(readFileSync(path, 'utf8')).toBe('a cache');
  });

  it('when the fsync fails (EIO), renames nothing: the old file stays, the temporary file goes', async () => {
    for (const synchronous of [false, true]) {
      const { path, names } = fileWithOldContent();
      const files = new FaultyFiles();
      const synced: string[] = [];
      files.failSync = (syncedPath) => {
        synced.push(syncedPath);
        return 'EIO';
      };
      const write = synchronous
        ? async () => writeFileAtomicSync(path, 'never seen', { files, fsync: true })
        : () => writeFileAtomic(path, 'never seen', { files, fsync: true });
      await expect(write()).rejects.toMatchObject({ code: 'EIO' });
      // It was the temporary file that was synced: beside the file, hidden, with random hex in its name.
      expect(synced).toHaveLength(1);
      expect(synced[0]).toMatch(/[/\\]\.file\.json\.[0-9a-f]{16}\.tmp$/);
      expect([files.calls.rename, readFileSync(path, 'utf8')]).toEqual([0, OLD]);
      expect(names()).toEqual(['file.json']);
    }
  });

  it('when the rename fails, keeps the old file and removes the temporary one', async () => {
    const { path, names } = fileWithOldContent();
    const files = new FaultyFiles();
    files.failRename = 'EACCES';
    await expect(writeFileAtomic(path, 'never seen', { files })).rejects.toMatchObject({ code: 'EACCES' });
    expect(readFileSync(path, 'utf8')).toBe(OLD);
    expect(names()).toEqual(['file.json']);
  });

  it('never follows a symlink planted at the temporary name, nor truncates what it points to', () => {
    const { directory, path } = fileWithOldContent();
    const victim = join(temporaryDirectory(), 'victim');
    writeFileSync(victim, 'not yours');
    symlinkSync(victim, join(directory, '.planted.tmp'));
    expect(() => writeFileAtomicSync(path, 'new', { temporaryName: () => '.planted.tmp' })).toThrow(
      expect.objectContaining({ code: 'EEXIST' }),
    );
    expect(readFileSync(victim, 'utf8')).toBe('not yours');
    expect(readFileSync(path, 'utf8')).toBe(OLD);
  });

  it("replaces a symlink at the file's own name with the file, never writing through it", () => {
    const directory = temporaryDirectory();
    const target = join(temporaryDirectory(), 'elsewhere.json');
    writeFileSync(target, 'the target');
    const path = join(directory, 'file.json');
    symlinkSync(target, path);
    writeFileAtomicSync(path, 'the new file');
    expect(readFileSync(target, 'utf8')).toBe('the target');
    expect(statSync(path).isFile()).toBe(true);
    expect(readFileSync(path, 'utf8')).toBe('the new file');
  });

  it('gives each write a temporary name of its own: two at once do not meet', async () => {
    const { path, names } = fileWithOldContent();
    const first = createAtomicFile(path);
    const second = createAtomicFile(path);
    expect(first.temporary).not.toBe(second.temporary);
    first.write(bytes('first'));
    second.write(bytes('second'));
    await second.commit();
    await first.commit();
    expect(readFileSync(path, 'utf8')).toBe('first');
    expect(names()).toEqual(['file.json']);
  });
});

describe('writeFileAtomic without replacing (evidence kept aside)', () => {
  it('puts a new file in place whole, and refuses one that exists, leaving it and nothing else', async () => {
    const { directory, path, names } = fileWithOldContent();
    const aside = join(directory, 'aside.json');
    await writeFileAtomic(aside, 'kept', { replace: false, fsync: true });
    expect(readFileSync(aside, 'utf8')).toBe('kept');
    await expect(writeFileAtomic(path, 'never seen', { replace: false })).rejects.toMatchObject({
      code: 'EEXIST',
    });
    expect(readFileSync(path, 'utf8')).toBe(OLD);
    expect(names()).toEqual(['aside.json', 'file.json']);
  });

  it('when its fsync fails, leaves nothing at the new name', async () => {
    const { directory, names } = fileWithOldContent();
    const files = new FaultyFiles();
    files.failSync = () => 'EIO';
    await expect(
      writeFileAtomic(join(directory, 'aside.json'), 'lost', { files, fsync: true, replace: false }),
    ).rejects.toMatchObject({ code: 'EIO' });
    expect(names()).toEqual(['file.json']);
  });
});

describe('createAtomicFile', () => {
  it('writes as the content arrives and at a position, as the list cache writes its header last', () => {
    const { path } = fileWithOldContent();
    const file = createAtomicFile(path, { temporaryName: (random) => `.list-${random}.tmp` });
    expect(file.temporary).toMatch(/[/\\]\.list-[0-9a-f]{16}\.tmp$/);
    file.write(bytes('      \n'));
    file.write(bytes('body'));
    // The old file is there, whole, until the commit.
    expect(readFileSync(path, 'utf8')).toBe(OLD);
    file.write(bytes('header'), 0);
    file.commitSync();
    expect(readFileSync(path, 'utf8')).toBe('header\nbody');
  });

  it('aborts quietly: the temporary file goes, the old file stays, and a second abort does nothing', () => {
    const { path, names } = fileWithOldContent();
    const file = createAtomicFile(path);
    file.write(bytes('half of it'));
    expect(names()).toHaveLength(2);
    file.abort();
    file.abort();
    expect(names()).toEqual(['file.json']);
    expect(readFileSync(path, 'utf8')).toBe(OLD);
    expect(() => file.write(bytes('more'))).toThrow(/no longer open/);
  });

  it('after a failed write, is already aborted: nothing is left to clean up', () => {
    const { path, names } = fileWithOldContent();
    const files = new FaultyFiles();
    files.spaceLeft = 4;
    const file = createAtomicFile(path, { files });
    expect(() => file.write(bytes('more than four bytes'))).toThrow(
      expect.objectContaining({ code: 'ENOSPC' }),
    );
    expect(names()).toEqual(['file.json']);
    expect(() => file.commitSync()).toThrow(/no longer open/);
    expect(readFileSync(path, 'utf8')).toBe(OLD);
  });
});

describe('moveDurably', () => {
  it('moves a file byte for byte and fsyncs its directory; a failed rename leaves it where it was', async () => {
    const { directory, path, names } = fileWithOldContent();
    const files = new FaultyFiles();
    const synced: string[] = [];
    files.failSync = (syncedPath) => {
      synced.push(syncedPath);
      return undefined;
    };
    files.failRename = 'EXDEV';
    await expect(moveDurably(files, path, join(directory, 'aside.json'))).rejects.toMatchObject({
      code: 'EXDEV',
    });
    expect([names(), synced]).toEqual([['file.json'], []]);
    files.failRename = undefined;
    await moveDurably(files, path, join(directory, 'aside.json'));
    expect(names()).toEqual(['aside.json']);
    expect(readFileSync(join(directory, 'aside.json'), 'utf8')).toBe(OLD);
    expect(synced).toEqual([directory]);
  });
});

describe('syncDirectory', () => {
  it('fsyncs the directory that holds the file, and reports its failure', async () => {
    const { directory, path } = fileWithOldContent();
    const files = new FaultyFiles();
    const synced: string[] = [];
    files.failSync = (syncedPath) => {
      synced.push(syncedPath);
      return undefined;
    };
    await syncDirectory(files, path);
    expect(synced).toEqual([directory]);
    files.failSync = () => 'EIO';
    await expect(syncDirectory(files, path)).rejects.toMatchObject({ code: 'EIO' });
  });
});
