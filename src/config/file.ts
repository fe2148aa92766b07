import { chmodSync, lstatSync, readFileSync, type Stats, statSync } from 'node:fs';
import * as z from 'zod/mini';
import { describeIssues } from '../contract/issues';
import { configError, PetinvError } from '../errors';
import { writeFileAtomicSync } from '../files/atomic-write';
import { makeDirectories, octalMode, withOpenFile } from '../files/file-system';
import { acquireLock, LockHeldError } from '../files/lock';
import { printable } from '../printable';
import { locateJsonSyntaxError } from './json-position';
import { configDirectory, configFilePath } from './paths';
import { baseUrlProblem, environmentNameProblem } from './settings';

/** A string the schema takes when `problem`, which says in words for people what is wrong with it, finds nothing. */
const checkedBy = (problem: (text: string) => string | undefined) =>
  z
    .string()
    .check(
      z.refine((text) => problem(text) === undefined, { error: (issue) => problem(String(issue.input)) }),
    );

/**
 * The config file's schema, the one check of the file, built when a file is read or written: a command
 * run on environment variables alone (scripts, CI) has no file to check and starts without it.
 */
function configFileSchema() {
  const EnvironmentName = checkedBy(environmentNameProblem);
  const Environment = z.strictObject({
    baseUrl: z.optional(checkedBy(baseUrlProblem)),
    apiKey: z.optional(z.string().check(z.minLength(1))),
  });
  return z.strictObject({
    currentEnv: z.optional(EnvironmentName),
    environments: z._default(z.record(EnvironmentName, Environment), {}),
  });
}

export type ConfigFile = z.output<ReturnType<typeof configFileSchema>>;

/**
 * Refuses a config file or directory that someone else owns or can write, as ssh does with its own files:
 * whoever can change the file can point an environment's URL elsewhere and collect the key sent there.
 */
function checkOwnership(stat: Stats, path: string, what: 'directory' | 'file') {
  const uid = process.getuid?.();
  if (uid === undefined) return; // Windows: no POSIX owners or modes.
  // Root's files are accepted too, as ssh accepts them: root can change anything anyway.
  if (stat.uid !== uid && stat.uid !== 0)
    throw configError(
      `config ${what} ${path} belongs to uid ${stat.uid}, not to you (uid ${uid}); petinv will not trust it: ` +
        `chown ${uid} ${path}, or set PETINV_CONFIG_DIR to a directory of your own`,
    );
  if ((stat.mode & 0o022) !== 0)
    throw configError(
      `config ${what} ${path} can be changed by other users (mode ${octalMode(stat.mode)}); petinv will not trust it: ` +
        `chmod ${what === 'directory' ? '700' : '600'} ${path}`,
    );
}

/** Checks the config directory if it exists; returns whether it does. */
function checkDirectory(directory: string): boolean {
  let stat: Stats;
  try {
    // stat follows a symlinked directory (dotfile setups do that): its target is what must be ours.
    stat = statSync(directory);
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    if (code === 'ENOENT') return false;
    throw configError(`cannot use config directory ${directory} (${code ?? (error as Error).message})`);
  }
  if (!stat.isDirectory()) throw configError(`config directory ${directory} is not a directory`);
  checkOwnership(stat, directory, 'directory');
  return true;
}

export const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The config file as petinv writes it, checked by hand with the schema's rules; else undefined, and the
 * schema checks it and words what is wrong. A copy that pays: the schema costs a cold `petinv list` 1.9 ms
 * of CPU (Node 24, paired median of 120 runs); a property test holds the two to the same answers.
 */
export function usualConfigFile(raw: unknown): ConfigFile | undefined {
  if (!isPlainObject(raw)) return undefined;
  const { currentEnv, environments = {} } = raw;
  for (const key of Object.keys(raw)) if (key !== 'currentEnv' && key !== 'environments') return undefined;
  if (currentEnv !== undefined && (typeof currentEnv !== 'string' || environmentNameProblem(currentEnv)))
    return undefined;
  if (!isPlainObject(environments)) return undefined;
  const checked: ConfigFile['environments'] = {};
  for (const [name, environment] of Object.entries(environments)) {
    // A key the schema would set as a prototype rather than a property: left to the schema.
    if (name === '__proto__' || environmentNameProblem(name) || !isPlainObject(environment)) return undefined;
    const { baseUrl, apiKey } = environment;
    for (const key of Object.keys(environment)) if (key !== 'baseUrl' && key !== 'apiKey') return undefined;
    if (baseUrl !== undefined && (typeof baseUrl !== 'string' || baseUrlProblem(baseUrl))) return undefined;
    if (apiKey !== undefined && (typeof apiKey !== 'string' || apiKey.length === 0)) return undefined;
    checked[name] = { ...(baseUrl !== undefined && { baseUrl }), ...(apiKey !== undefined && { apiKey }) };
  }
  return { ...(currentEnv !== undefined && { currentEnv }), environments: checked };
}

/** The config file's schema, for tests that compare it with usualConfigFile. */
export const checkConfigFile = (raw: unknown) => configFileSchema().safeParse(raw);

function parseConfigText(text: string, path: string): ConfigFile {
  const json = text.replace(/^\uFEFF/, '');
  let raw: unknown;
  try {
    raw = json.trim() === '' ? {} : JSON.parse(json);
  } catch {
    // JSON.parse's message quotes the text, and this text holds keys: say where, never what.
    const syntax = locateJsonSyntaxError(json);
    const where = syntax ? ` at line ${syntax.line}, column ${syntax.column}: ${syntax.problem}` : '';
    throw configError(`config file ${path} is not valid JSON${where}; fix or delete it`);
  }
  const usual = usualConfigFile(raw);
  if (usual) return usual;
  const parsed = configFileSchema().safeParse(raw);
  if (!parsed.success)
    // The issues name the fields they are about, and a field name is text from the file: one clean line.
    throw configError(
      `config file ${path} is invalid: ${printable(describeIssues(parsed.error, [], 'the file'), 300)}; fix or delete it`,
    );
  return parsed.data;
}

/** Reads and validates the config file; an absent file is an empty config. */
export function readConfigFile(env: NodeJS.ProcessEnv): ConfigFile {
  const path = configFilePath(env);
  if (!checkDirectory(configDirectory(env))) return { environments: {} };
  let text: string;
  try {
    text = withOpenFile(path, 'r', (fd, stat) => {
      if (!stat.isFile()) throw configError(`config file ${path} is not a regular file`);
      checkOwnership(stat, path, 'file');
      return readFileSync(fd, 'utf8');
    });
  } catch (error) {
    if (error instanceof PetinvError) throw error;
    const { code } = error as NodeJS.ErrnoException;
    // Only the open can find no file: the reads after it are of the file it opened.
    if (code === 'ENOENT') return { environments: {} };
    throw configError(`cannot read config file ${path} (${code ?? (error as Error).message})`);
  }
  return parseConfigText(text, path);
}

function writeFailure(what: string, path: string, error: unknown) {
  const { code } = error as NodeJS.ErrnoException;
  const hint =
    code === 'EACCES' || code === 'EPERM' || code === 'EROFS'
      ? '; check its permissions, or set PETINV_CONFIG_DIR to a directory you can write'
      : '';
  return configError(`cannot write ${what} ${path} (${code ?? (error as Error).message})${hint}`);
}

function prepareDirectory(directory: string) {
  try {
    makeDirectories(directory, 0o700);
    checkDirectory(directory);
    chmodSync(directory, 0o700);
  } catch (error) {
    throw error instanceof PetinvError ? error : writeFailure('config directory', directory, error);
  }
}

/**
 * Applies a change to the stored config under its lock: read, validate, change, write. It is written whole,
 * readable by its owner alone, atomically (files/atomic-write.ts), as tab-indented JSON as conf wrote it.
 */
export async function updateConfigFile(change: (config: ConfigFile) => void, env: NodeJS.ProcessEnv) {
  prepareDirectory(configDirectory(env));
  const path = configFilePath(env);
  return withConfigLock(`${path}.lock`, () => {
    const config = readConfigFile(env);
    change(config);
    try {
      // A rename would replace a symlink at the file's name: a config file that is a link is refused for
      // writing (reading follows it), neither written through nor silently replaced.
      if (lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink())
        throw configError(
          `config file ${path} is a symbolic link; petinv does not write through links: replace the link with a copy of the file it points to, or set PETINV_CONFIG_DIR`,
        );
      const text = JSON.stringify(configFileSchema().parse(config), undefined, '\t');
      writeFileAtomicSync(path, text, { mode: 0o600, fsync: true });
      // The umask may narrow a new file's mode, never widen it: this makes it exactly the owner's.
      chmodSync(path, 0o600);
      return path;
    } catch (error) {
      throw error instanceof PetinvError ? error : writeFailure('config file', path, error);
    }
  });
}

/** A lock from another host cannot be checked; this old, its holder is surely gone. */
const CONFIG_LOCK_ABANDONED_AFTER_MS = 60_000;

/**
 * Runs `work` holding the config file's lock (files/lock.ts), so two commands run at once cannot each
 * write back the file without the other's change. A holder keeps it for milliseconds: a writer waits.
 */
export async function withConfigLock<T>(
  path: string,
  work: () => T | Promise<T>,
  options: { waitMs?: number } = {},
): Promise<T> {
  const lock = await acquireLock(path, {
    mode: 0o600,
    abandonUncheckableAfterMs: CONFIG_LOCK_ABANDONED_AFTER_MS,
    waitMs: options.waitMs ?? 10_000,
  }).catch((error: unknown) => {
    if (error instanceof LockHeldError) {
      const holder = error.heldBy;
      const owner = holder ? ` by pid ${holder.pid}${holder.host ? ` on ${holder.host}` : ''}` : '';
      throw configError(
        `the config file is locked${owner} (${path}); try again, or delete the lock file if no petinv is running`,
      );
    }
    const { code } = error as NodeJS.ErrnoException;
    throw configError(`cannot create the lock file ${path} (${code ?? (error as Error).message})`);
  });
  try {
    return await work();
  } finally {
    await lock.release();
  }
}
