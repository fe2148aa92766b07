import { once } from 'node:events';
import { closeSync, constants, fstatSync, lstatSync, openSync, statSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { makeDirectories } from './file-system';
import { tryLock } from './lock-file';
import { describeLockOwner, encodePath, LockHeldError, type LockOwner, parseOwner } from './lock-record';

/**
 * Claims of a name with the kernel, as docs/serve-operations.md describes: on Linux an abstract Unix socket,
 * freed however the process exits, so nothing is left stale and a full disk never stops a restart.
 */

/** Whether this platform has abstract socket addresses (Linux alone); elsewhere claims are lock files. */
const hasAbstractSockets = process.platform === 'linux';

/** How long a refused claim waits for the holder's record; a holder that cannot answer is named without it. */
const ASK_TIMEOUT_MS = 1000;

// node:crypto is fetched when a lock is taken, not imported: it is about 3 ms of a read-only command's
// cold start, which loads this module (serve-records.ts, config/file.ts).
const hashed = (text: string) =>
  process.getBuiltinModule('node:crypto').createHash('sha256').update(text).digest('hex').slice(0, 32);

/**
 * The name of the directory entry `path` (its directory's device and inode, and its base name): the same
 * through every path, and there before the file is, so that two starts creating it cannot both go ahead.
 */
function entryIdentityName(path: string): string {
  const stat = statSync(dirname(path), { bigint: true });
  return `petinv/entry/${stat.dev}:${stat.ino}/${hashed(basename(path))}`;
}

type Claim = { readonly name: string; release(): Promise<void> };

/** Asks the holder of `name` for its owner record; undefined when it does not answer in time. */
function askHolder(name: string): Promise<LockOwner | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const socket = connect({ path: `\0${name}` });
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(parseOwner(Buffer.concat(chunks).toString('utf8')));
    };
    const timer = setTimeout(done, ASK_TIMEOUT_MS);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', done);
    socket.on('error', done);
  });
}

/** Claims `name` with the kernel, answering `record` to whoever asks; a LockHeldError naming another holder. */
async function claimAbstractName(name: string, record: string, lockPath: string): Promise<Claim> {
  const server: Server = createServer((socket) => {
    socket.on('error', () => {}); // An asker that went away.
    socket.end(record);
  });
  try {
    await once(server.listen({ path: `\0${name}`, exclusive: true }), 'listening');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    throw new LockHeldError(lockPath, await askHolder(name), 'identity');
  }
  // A claim never keeps the process alive by itself.
  server.unref();
  server.on('error', () => {});
  let released: Promise<void> | undefined;
  return {
    name,
    release: () => (released ??= new Promise<void>((resolve) => server.close(() => resolve()))),
  };
}

export interface IdentityOptions {
  /** serve: also claim this file's identity (device and inode) and its directory entry (lock.ts). */
  identityOf?: string;
  /**
   * Where claims are lock files without abstract sockets (not Linux, a sandbox refusing them, or a test
   * asking); default: `petinv-locks-UID` in the temporary directory.
   */
  identityDirectory?: string;
}

/** Set once listening on an abstract name failed other than as taken (a sandbox that forbids it, say). */
let abstractSocketsRefused = false;

/**
 * The directory of identity lock files where there are no abstract sockets: one per user (on macOS the
 * temporary directory is per user already), private, and refused when someone else made it first.
 */
function identityDirectory(options: IdentityOptions): string {
  if (options.identityDirectory !== undefined) return options.identityDirectory;
  const directory = join(tmpdir(), `petinv-locks-${process.getuid?.() ?? 'user'}`);
  makeDirectories(directory, 0o700);
  const stat = lstatSync(directory);
  const owner = process.getuid?.();
  if (!stat.isDirectory() || (owner !== undefined && stat.uid !== owner) || (stat.mode & 0o022) !== 0)
    throw Object.assign(new Error(`${directory} is not a private directory of this user; remove it`), {
      code: 'EPERM',
    });
  return directory;
}

/** Claims `name` with the kernel, or with a lock file where there are no abstract sockets. */
async function claimName(name: string, options: IdentityOptions, lockPath: string): Promise<Claim> {
  if (hasAbstractSockets && !abstractSocketsRefused && options.identityDirectory === undefined) {
    const path = options.identityOf === undefined ? '' : encodePath(options.identityOf);
    try {
      return await claimAbstractName(name, `${describeLockOwner(process.pid)}${path}`, lockPath);
    } catch (error) {
      if (error instanceof LockHeldError) throw error;
      abstractSocketsRefused = true;
    }
  }
  // Through the real file system: `files` stands for the data file's disk, and this is another one.
  const attempt = tryLock(join(identityDirectory(options), `${name.replaceAll('/', '_')}.lock`));
  if (!attempt.acquired) throw new LockHeldError(lockPath, attempt.heldBy, 'identity');
  return { name, release: async () => attempt.release() };
}

/** Opens `path` to claim its identity (undefined: no file yet), kept open: nlink 0 then says no name is left. */
function openIdentity(path: string): { fd: number; name: string } | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  // The file's device and inode: shared by every name that reaches it (hard links, bind mounts).
  const stat = fstatSync(fd, { bigint: true });
  return { fd, name: `petinv/file/${stat.dev}:${stat.ino}` };
}

/** serve's kernel claims on the file at `path` (see the module's comment). */
export async function claimIdentities(path: string, lockPath: string, options: IdentityOptions) {
  /** Each with its file kept open (when it is one), to tell when no name reaches it any more. */
  const claims: { claim: Claim; fd?: number }[] = [];
  let released = false;
  /** Follows run one at a time, and a release waits for the one under way. */
  let following: Promise<void> = Promise.resolve();
  const releaseAll = async () => {
    released = true;
    await following.catch(() => {});
    for (const { claim, fd } of claims.splice(0).reverse()) {
      await claim.release();
      if (fd !== undefined) closeSync(fd);
    }
  };
  const followNow = async () => {
    const opened = released ? undefined : openIdentity(path);
    if (!opened) return;
    if (claims.some(({ claim }) => claim.name === opened.name)) return closeSync(opened.fd);
    try {
      claims.push({ claim: await claimName(opened.name, options, lockPath), fd: opened.fd });
    } catch (error) {
      closeSync(opened.fd);
      throw error;
    }
    // A former identity no name reaches any more is freed (its inode number goes to the next new file).
    for (const former of claims.slice(0, -1))
      if (former.fd !== undefined && fstatSync(former.fd).nlink === 0) {
        claims.splice(claims.indexOf(former), 1);
        await former.claim.release();
        closeSync(former.fd);
      }
  };
  const follow = () => (following = following.catch(() => {}).then(followNow));
  try {
    claims.push({ claim: await claimName(entryIdentityName(path), options, lockPath) });
    await follow();
  } catch (error) {
    await releaseAll();
    throw error;
  }
  return { follow, releaseAll };
}
