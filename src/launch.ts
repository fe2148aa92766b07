import { isAscii } from 'node:buffer';
import { lstatSync, readdirSync, readFileSync, rmSync, type Stats, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Script } from 'node:vm';
import { cacheDirectory } from './config/paths';
import { writeFileAtomicSync } from './files/atomic-write';
import { makeDirectories, READ_NO_FOLLOW, tryOr, withOpenFile } from './files/file-system';
import { COMMAND_NAMES, commandWord } from './program/command-word';

/**
 * How bin/petinv.cjs loads the CLI bundle: as Node's `require` would, with the code V8 compiled in the last
 * successful run of the same command kept (about 15 ms of a cold `petinv list`; Node's own compile cache
 * measured slower). Being executable, it is trusted as the list cache is, and named so that V8 never gets
 * code for another bundle or Node (codeFile); why each part is so: docs/performance.md.
 */

/** What dist/cli.cjs exports to the bin. */
export type CliModule = { main(argv: readonly string[], io: unknown): Promise<number>; processIo(): unknown };

export interface LoadedCli {
  cli: CliModule;
  /** Keeps the code V8 has compiled so far for the next run, when there was none or V8 refused it. */
  keepCompiledCode(): void;
}

/** The names codeFile gives, and earlier versions gave: pruning never removes a user's file named `code-…`. */
const CODE_FILE = /^code-(v\d+\.\d+\.\d+\S*?-[a-z0-9]+(?:-\d+){3,4})(?:-[a-z_][a-z0-9_-]*)?\.bin$/;
/** The launcher's temporary files (see writePrivateFile), and the age past which one was abandoned. */
const TEMPORARY_FILE = /^\.code-[0-9a-f]{16}\.tmp$/;
const ABANDONED_AFTER_MS = 60 * 60 * 1000;
/** Builds whose code is kept at most, this one included: a few installs or Node versions in use at once. */
const KEPT_BUILDS = 4;
/** Code files kept for one build: one per command, and `other` for a line naming none (typos would prune commands). */
const KEPT_COMMANDS = COMMAND_NAMES.size + 1;
/** V8's code is about 1.4 times the bundle: a larger file is not V8's (a padded one would be read every start). */
const LARGEST_CODE_PER_SOURCE_BYTE = 4;

export function loadCli(
  path: string,
  env: NodeJS.ProcessEnv = process.env,
  argv: readonly string[] = process.argv,
): LoadedCli {
  const source = readSource(path);
  const cache = codeFile(path, env, commandWord(argv.slice(2)));
  const kept = cache && readPrivateFile(cache.directory, cache.file, cache.largest);
  // Node's own CommonJS wrapper, on the source's first line: stack traces keep their line numbers.
  const script = new Script(`(function (exports, require, module, __filename, __dirname) { ${source}\n})`, {
    filename: path,
    // No importModuleDynamically, so the bundle has no import() (tsup.config.ts): on 22 and 24 a callback
    // needs --experimental-vm-modules and prints an ExperimentalWarning.
    cachedData: kept,
  });
  const module = { exports: {} as CliModule };
  // launch.cjs is beside cli.cjs in dist/, so its own require resolves what the bundle requires (undici)
  // as it would for cli.cjs; node:module's createRequire would load Node's ES module loader too.
  script.runInThisContext()(module.exports, require, module, path, dirname(path));
  return {
    cli: module.exports,
    keepCompiledCode() {
      if (!cache || (kept && !script.cachedDataRejected)) return;
      try {
        writePrivateFile(cache.directory, cache.file, script.createCachedData());
      } catch {
        // Not kept: the next run compiles again, as it would without a cache.
      }
    },
  };
}

/**
 * The bundle's text. esbuild writes it in ASCII (tsup.config.ts), and ASCII read as Latin-1 is the same
 * text without decoding: 0.3 ms where UTF-8 takes 2 to 7. Anything else is read as UTF-8, as Node would.
 */
function readSource(path: string): string {
  const bytes = readFileSync(path);
  return isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
}

/**
 * Where the code for `command` (the first word after `petinv`) is kept. One file per command: V8 keeps the
 * functions one run compiled, and code kept by `petinv --help` left list compiling the rest (7 ms).
 */
function codeFile(path: string, env: NodeJS.ProcessEnv, command: string | undefined) {
  return tryOr(() => {
    const { size, mtimeMs, ctimeMs, ino } = statSync(path);
    // The change time too: a modification time can be set back (tar, cp -p; every npm tarball says
    // 1985-10-26), and a new bundle of the same size in the same inode would run the old one's code.
    const build = `${size}-${Math.round(mtimeMs * 1000)}-${Math.round(ctimeMs * 1000)}-${ino}`;
    return {
      directory: cacheDirectory(env),
      file: `code-${process.version}-${process.arch}-${build}-${command ?? 'other'}.bin`,
      largest: size * LARGEST_CODE_PER_SOURCE_BYTE,
    };
  }, undefined);
}

const uid = () => process.getuid?.() ?? -1;
const ownedAndPrivate = (stat: Stats, others: number) => stat.uid === uid() && (stat.mode & others) === 0;

function privateDirectory(directory: string): boolean {
  const stat = lstatSync(directory, { throwIfNoEntry: false });
  return stat?.isDirectory() === true && ownedAndPrivate(stat, 0o022);
}

function readPrivateFile(directory: string, file: string, largest: number): Buffer | undefined {
  return tryOr(() => {
    if (!privateDirectory(directory)) return undefined;
    return withOpenFile(join(directory, file), READ_NO_FOLLOW, (fd, stat) => {
      const trusted = stat.isFile() && ownedAndPrivate(stat, 0o077) && stat.size <= largest;
      return trusted ? readFileSync(fd) : undefined;
    });
  }, undefined);
}

function writePrivateFile(directory: string, file: string, bytes: Buffer): void {
  makeDirectories(directory, 0o700);
  if (!privateDirectory(directory)) return;
  writeFileAtomicSync(join(directory, file), bytes, {
    mode: 0o600,
    temporaryName: (random) => `.code-${random}.tmp`,
  });
  const names = readdirSync(directory);
  // A name's own modification time, never through a symlink: a dangling one (or a file another petinv has
  // just removed) would otherwise throw and end every run's pruning here.
  const modified = (name: string) => lstatSync(join(directory, name), { throwIfNoEntry: false })?.mtimeMs;
  // A petinv killed between writing and renaming leaves its temporary file; an hour on, nobody writes it.
  for (const name of names.filter((candidate) => TEMPORARY_FILE.test(candidate))) {
    if (Date.now() - (modified(name) ?? Date.now()) > ABANDONED_AFTER_MS)
      rmSync(join(directory, name), { force: true });
  }
  // Code kept for earlier builds goes, but not at once: two installs of petinv in use side by side (a
  // global one and a clone) would otherwise remove each other's at every run. Newest first, by build.
  const newestFirst = names
    .map((name) => ({ name, build: CODE_FILE.exec(name)?.[1] }))
    .filter((code): code is { name: string; build: string } => code.build !== undefined && code.name !== file)
    .map((code) => ({ ...code, mtimeMs: modified(code.name) ?? 0 }))
    .sort((a, b) => b.mtimeMs - a.mtimeMs);
  const builds = Map.groupBy(newestFirst, (code) => code.build);
  const thisBuild = CODE_FILE.exec(file)?.[1];
  const others = [...builds.keys()].filter((build) => build !== thisBuild);
  const removed = [
    ...(builds.get(thisBuild ?? '') ?? []).slice(KEPT_COMMANDS - 1),
    ...others.slice(KEPT_BUILDS - 1).flatMap((build) => builds.get(build) ?? []),
  ];
  for (const { name } of removed) rmSync(join(directory, name), { force: true });
}
