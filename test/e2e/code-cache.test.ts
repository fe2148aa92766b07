import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { version } from '../../package.json';
import { COMPLETE_COMMAND } from '../../src/commands/complete';
import { COMMANDS } from '../../src/program/build';
import { COMMAND_NAMES } from '../../src/program/command-word';
import {
  cleanEnv,
  closedPort,
  PETINV_BIN,
  runPetinv,
  spawnServer,
  temporaryDirectory,
} from '../helpers/serve';

/**
 * The code V8 compiled for the CLI, kept in the cache directory by the launcher (src/launch.ts): whether it
 * is written, used, distrusted and replaced is seen from outside, in the files a real `petinv` leaves.
 */

const prefix = `code-${process.version}-${process.arch}-`;

function cacheDirectory(): string {
  const directory = temporaryDirectory('petinv-code-');
  chmodSync(directory, 0o700);
  return directory;
}

const codeFiles = (directory: string) => readdirSync(directory).filter((name) => name.startsWith('code-'));

async function petinvVersion(directory: string) {
  const result = await runPetinv(['--version'], { env: { PETINV_CACHE_DIR: directory } });
  expect(result).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: '' });
}

// What a first run keeps, made once: the tests that spoil it start from a copy (a run costs a process).
let kept: { name: string; code: Buffer };
beforeAll(async () => {
  const directory = cacheDirectory();
  await petinvVersion(directory);
  const [name] = codeFiles(directory);
  kept = { name: name as string, code: readFileSync(join(directory, name as string)) };
});

/** A cache directory holding what a first run kept; the path of the code file in it. */
function keptCode(): string {
  const path = join(cacheDirectory(), kept.name);
  writeFileSync(path, kept.code, { mode: 0o600 });
  return path;
}

describe('the bundle the launcher reads', () => {
  it('is ASCII, which the launcher reads as Latin-1 without decoding (src/launch.ts)', () => {
    const bundle = readFileSync(join(PETINV_BIN, '..', '..', 'dist', 'cli.cjs'));
    const beyond = bundle.findIndex((byte) => byte > 0x7f);
    // Where a character beyond ASCII crept in (a comment esbuild kept, a license text), to fix at its source.
    expect(beyond === -1 ? '' : bundle.toString('utf8', Math.max(0, beyond - 80), beyond + 20)).toBe('');
  });
});

/** Four other builds' code files in `directory`, newest first (1000 s apart); their names. */
function plantOtherBuilds(directory: string): string[] {
  return ['1-2-3', '4-5-6', '7-8-9', '10-11-12'].map((build, age) => {
    const name = `${prefix}${build}.bin`;
    const path = join(directory, name);
    writeFileSync(path, 'old', { mode: 0o600 });
    const seconds = Date.now() / 1000 - 1000 * (age + 1);
    utimesSync(path, seconds, seconds);
    return name;
  });
}

describe('the compiled code kept between runs', () => {
  it('is written once, 0600, and used as it is by the next run', async () => {
    const directory = cacheDirectory();
    await petinvVersion(directory);
    const [file] = codeFiles(directory);
    expect(file).toMatch(new RegExp(`^${prefix}\\d+-\\d+-\\d+-\\d+-other\\.bin$`));
    const path = join(directory, file as string);
    const first = statSync(path);
    expect(first.mode & 0o777).toBe(0o600);
    expect(first.size).toBeGreaterThan(10_000);
    // Accepted by V8, it is not written again: a rewrite would rename a new file (another inode) over it.
    await petinvVersion(directory);
    const second = statSync(path);
    expect([second.ino, second.mtimeMs]).toEqual([first.ino, first.mtimeMs]);
    expect(readdirSync(directory).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  /** Runs `work` with the environment of a `petinv list` against a running serve, code kept in `directory`. */
  async function withService(
    directory: string,
    work: (list: (options?: string[]) => Promise<void>) => Promise<void>,
    extraEnv: NodeJS.ProcessEnv = {},
  ) {
    const server = await spawnServer(['--in-memory', '--api-key', 'code-key']);
    const env = {
      ...extraEnv,
      PETINV_CACHE_DIR: directory,
      PETINV_CONFIG_DIR: temporaryDirectory('petinv-code-config-'),
      PETINV_ENV: 'local',
      PETINV_BASE_URL: server.baseUrl,
      PETINV_API_KEY: 'code-key',
    };
    try {
      // `options` come before the command, as the docs write `petinv --env local list`.
      await work(async (options = []) =>
        expect(await runPetinv([...options, 'list', '--limit', '1'], { env })).toMatchObject({
          code: 0,
          stdout: '1\tavailable\t12\n',
        }),
      );
    } finally {
      await server.stop();
    }
  }

  const fileState = (path: string) => {
    const { ino, mtimeMs } = statSync(path);
    return [ino, mtimeMs];
  };

  it('made by a run that asked a service, is used by the next, not made again', async () => {
    // V8 refuses kept code made under other flags; such code would be rewritten by every run.
    const directory = cacheDirectory();
    await withService(directory, async (list) => {
      await list();
      const [file] = codeFiles(directory);
      const first = fileState(join(directory, file as string));
      await list();
      expect(fileState(join(directory, file as string))).toEqual(first);
    });
  });

  it('is kept per command: a list after --version runs from code of its own, kept once', async () => {
    // V8 keeps what one run compiled: the code --version left has little of what list runs.
    const directory = cacheDirectory();
    await petinvVersion(directory);
    await withService(directory, async (list) => {
      await list();
      const files = codeFiles(directory);
      expect(files).toHaveLength(2);
      const listed = files.find((name) => name.endsWith('-list.bin'));
      expect(files.find((name) => name.endsWith('-other.bin'))).toBeDefined();
      const first = fileState(join(directory, listed as string));
      await list();
      await list(['--env', 'local', '-v']);
      await petinvVersion(directory);
      expect(fileState(join(directory, listed as string))).toEqual(first);
      expect(codeFiles(directory)).toHaveLength(2);
    });
  });

  it('names a file after each command the program declares (src/program/build.ts), and no other word', () => {
    expect([...COMMAND_NAMES].sort()).toEqual([...Object.keys(COMMANDS), COMPLETE_COMMAND].sort());
  });

  it("keeps a command's code past any number of words that name no command (petinv WORD --help exits 0)", async () => {
    // Code kept and accepted is never written again, so its modification time is its first run's: were each
    // such word kept apart, the oldest command (list, kept first and used most) would be the first pruned.
    const directory = cacheDirectory();
    await withService(directory, async (list) => {
      await list();
      const [listed] = codeFiles(directory);
      const first = fileState(join(directory, listed as string));
      for (let index = 0; index < 17; index++) {
        const result = await runPetinv([`word${index}`, '--help'], { env: { PETINV_CACHE_DIR: directory } });
        expect(result.code).toBe(0);
      }
      expect(codeFiles(directory).sort()).toEqual(
        [listed, (listed as string).replace(/-list\.bin$/, '-other.bin')].sort(),
      );
      await list();
      expect(fileState(join(directory, listed as string))).toEqual(first);
    });
    // Nineteen whole processes one after another: on a loaded 2-core CI machine that outlasts the default 20 s.
  }, 60_000);

  it('is kept by a run that succeeded only: a list that failed leaves none for the lists after it', async () => {
    const directory = cacheDirectory();
    const env = {
      PETINV_CACHE_DIR: directory,
      PETINV_CONFIG_DIR: temporaryDirectory('petinv-code-config-'),
      PETINV_ENV: 'local',
      PETINV_BASE_URL: `http://127.0.0.1:${await closedPort()}/v1`,
      PETINV_API_KEY: 'code-key',
    };
    const failed = await runPetinv(['list', '--retries', '0'], { env });
    expect(failed.code).not.toBe(0);
    expect(codeFiles(directory)).toEqual([]);
    await withService(directory, async (list) => {
      await list();
      expect(codeFiles(directory)).toEqual([expect.stringMatching(/-list\.bin$/)]);
    });
  });

  it('keeps the code of a few commands of one build, and removes the oldest', async () => {
    const directory = cacheDirectory();
    await petinvVersion(directory);
    const [mine] = codeFiles(directory);
    const build = (mine as string).replace(/-other\.bin$/, '');
    // Each command's, and one a version that kept any first word apart left, the oldest.
    const words = [...COMMAND_NAMES, 'word'];
    for (const [age, word] of words.entries()) {
      const path = join(directory, `${build}-${word}.bin`);
      writeFileSync(path, 'old', { mode: 0o600 });
      const seconds = Date.now() / 1000 - 1000 * (age + 1);
      utimesSync(path, seconds, seconds);
    }
    rmSync(join(directory, mine as string));
    await petinvVersion(directory);
    const files = codeFiles(directory);
    // This run's, and the newest others of this build, one per command and other: the oldest goes.
    expect(files).toHaveLength(COMMAND_NAMES.size + 1);
    expect(files).toContain(mine);
    expect(files).not.toContain(`${build}-${words.at(-1)}.bin`);
  });

  it('runs from kept code every command part: conf writing the config, twice', async () => {
    const directory = cacheDirectory();
    const env = { PETINV_CACHE_DIR: directory, PETINV_CONFIG_DIR: temporaryDirectory('petinv-code-config-') };
    for (const name of ['qa', 'qa2']) {
      const result = await runPetinv(['env', 'set-url', name, `https://${name}.example/v1`], { env });
      expect(result).toMatchObject({ code: 0, stderr: `petinv: ${name} is at https://${name}.example/v1\n` });
    }
    expect(codeFiles(directory)).toHaveLength(1);
    const listed = await runPetinv(['env'], { env });
    expect(listed.stdout).toContain('qa2\thttps://qa2.example/v1');
  });

  it('when corrupt or cut short, costs only the speed-up and is replaced', async () => {
    const path = keptCode();
    const directory = dirname(path);
    const good = readFileSync(path);
    for (const bad of [Buffer.from('not compiled code'), good.subarray(0, good.length / 2)]) {
      writeFileSync(path, bad, { mode: 0o600 });
      await petinvVersion(directory);
      expect(statSync(path).size).toBeGreaterThan(good.length * 0.9);
    }
  });

  it('is not read when larger than V8 ever makes it, which V8 would accept padded, and is replaced', async () => {
    const path = keptCode();
    const directory = dirname(path);
    // Four times the bundle: the most the launcher reads (every function compiled is about 1.4 times).
    const bundle = statSync(join(PETINV_BIN, '..', '..', 'dist', 'cli.cjs')).size;
    truncateSync(path, bundle * 4 + 1);
    await petinvVersion(directory);
    // Replaced by V8's code of this run (a few bytes more or less than the first run's).
    expect(statSync(path).size).toBeGreaterThan(10_000);
    expect(statSync(path).size).toBeLessThan(bundle);
  });

  it('is neither read nor written through a symbolic link or a FIFO, nor in a directory others can write', async () => {
    const path = keptCode();
    const directory = dirname(path);
    const elsewhere = join(temporaryDirectory('petinv-code-target-'), 'target');
    writeFileSync(elsewhere, 'someone else’s file');
    rmSync(path);
    symlinkSync(elsewhere, path);
    await petinvVersion(directory);
    expect(readFileSync(elsewhere, 'utf8')).toBe('someone else’s file');
    // The link was replaced by a file of petinv's own, not written through.
    expect(statSync(path).size).toBeGreaterThan(10_000);

    // A FIFO at its name would hold an open for reading until someone writes to it.
    rmSync(path);
    execFileSync('mkfifo', [path]);
    await petinvVersion(directory);
    expect(statSync(path).isFile()).toBe(true);

    const shared = cacheDirectory();
    chmodSync(shared, 0o777);
    await petinvVersion(shared);
    expect(codeFiles(shared)).toEqual([]);
  });

  it('is not used for another bundle of the same size, inode and modification time (a tarball unpacked over)', async () => {
    // An install of its own, whose bundle can be rewritten: npm tarballs date every file 1985-10-26, and
    // `tar x` of a new one over the old rewrites the file in place, so only the contents and the change
    // time tell the two builds apart.
    const install = temporaryDirectory('petinv-install-');
    mkdirSync(join(install, 'bin'));
    mkdirSync(join(install, 'dist'));
    const built = join(PETINV_BIN, '..', '..');
    for (const file of ['bin/petinv.cjs', 'dist/launch.cjs', 'dist/cli.cjs'])
      copyFileSync(join(built, file), join(install, file));
    const bundle = join(install, 'dist', 'cli.cjs');
    const directory = cacheDirectory();
    const installedVersion = () =>
      execFileSync(process.execPath, [join(install, 'bin', 'petinv.cjs'), '--version'], {
        env: { ...cleanEnv(), PETINV_CACHE_DIR: directory },
        encoding: 'utf8',
      });
    expect(installedVersion()).toBe(`${version}\n`);
    expect(codeFiles(directory)).toHaveLength(1);

    const before = statSync(bundle, { bigint: true });
    const otherVersion = version.replace(/\d/, (digit) => (digit === '9' ? '8' : '9'));
    const source = readFileSync(bundle, 'utf8');
    expect(source).toContain(`"${version}"`);
    writeFileSync(bundle, source.replace(`"${version}"`, `"${otherVersion}"`));
    const seconds = before.mtimeNs / 1_000_000_000n;
    const nanoseconds = String(before.mtimeNs % 1_000_000_000n).padStart(9, '0');
    execFileSync('touch', ['-d', `@${seconds}.${nanoseconds}`, bundle]);
    const after = statSync(bundle, { bigint: true });
    expect([after.size, after.mtimeNs, after.ino]).toEqual([before.size, before.mtimeNs, before.ino]);

    expect(installedVersion()).toBe(`${otherVersion}\n`);
    expect(codeFiles(directory)).toHaveLength(2);
  });

  it('keeps the code of a few other builds (installs side by side, other Nodes), and removes the oldest', async () => {
    const directory = cacheDirectory();
    const others = plantOtherBuilds(directory);
    await petinvVersion(directory);
    const files = codeFiles(directory);
    expect(files).toHaveLength(4);
    // The three newest others stay beside this build's; the oldest goes.
    expect(files).toEqual(expect.arrayContaining(others.slice(0, 3)));
    expect(files).not.toContain(others[3]);
  });

  it('still removes the oldest builds when a file named as kept code is a dangling symbolic link', async () => {
    // A stat that follows it fails; were that the end of pruning, no run would ever prune again.
    const directory = cacheDirectory();
    symlinkSync(join(directory, 'nowhere'), join(directory, `${prefix}0-0-0.bin`));
    const others = plantOtherBuilds(directory);
    await petinvVersion(directory);
    const files = codeFiles(directory);
    expect(files).not.toContain(others[3]);
    expect(files).toEqual(expect.arrayContaining(others.slice(0, 2)));
  });

  it('removes no file of the user’s own whose name merely starts with code-', async () => {
    const directory = cacheDirectory();
    const mine = join(directory, 'code-review-notes.bin');
    writeFileSync(mine, 'my notes');
    utimesSync(mine, new Date('2020-01-01'), new Date('2020-01-01'));
    for (const build of ['1-2-3', '4-5-6', '7-8-9'])
      writeFileSync(join(directory, `${prefix}${build}.bin`), 'old');
    await petinvVersion(directory);
    expect(readFileSync(mine, 'utf8')).toBe('my notes');
    expect(codeFiles(directory)).toHaveLength(5);
  });
  it('removes a temporary file a killed petinv left an hour ago, not one being written now', async () => {
    const directory = cacheDirectory();
    const abandoned = join(directory, '.code-00112233aabbccdd.tmp');
    const fresh = join(directory, '.code-4455667788990011.tmp');
    for (const path of [abandoned, fresh]) writeFileSync(path, 'partial', { mode: 0o600 });
    const twoHoursAgo = Date.now() / 1000 - 7200;
    utimesSync(abandoned, twoHoursAgo, twoHoursAgo);
    await petinvVersion(directory);
    expect(readdirSync(directory).filter((name) => name.endsWith('.tmp'))).toEqual([
      '.code-4455667788990011.tmp',
    ]);
  });
});
