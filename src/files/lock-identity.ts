import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { basename, dirname } from 'node:path';
import { type LockOwner, parseOwner } from './lock-record';

/**
 * Claims of a name with the kernel rather than the disk (part of the lock module, lock.ts). On Linux a
 * claim is a Unix socket listening on an abstract address (`\0petinv/...`): a name no file backs, held by
 * the kernel for as long as the process keeps the socket, and freed by the kernel when the process exits
 * however it exits (kill -9 included). A second listen on the same name fails with EADDRINUSE, so:
 * - a power cut or kill -9 leaves nothing behind to clean up, stale or torn;
 * - it needs no disk space, so a full disk never stops a restart;
 * - the holder answers whoever connects with its owner record, so a refusal names its pid.
 * Abstract addresses belong to a network namespace: two containers that share a data file but not a
 * network namespace do not see each other's claims (the lock file beside the data file still does).
 */

/** Whether this platform has abstract socket addresses (Linux alone); elsewhere lock.ts uses files. */
export const hasAbstractSockets = process.platform === 'linux';

/** How long a refused claim waits for the holder's record; a holder that cannot answer is named without it. */
const ASK_TIMEOUT_MS = 1000;

const hashed = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 32);

/**
 * The names that identify the file at `path` however it is reached (a hard link in any directory, a bind
 * mount, another path): its device and inode numbers. Undefined when there is no file (yet).
 */
export function fileIdentityName(path: string): string | undefined {
  const stat = statSync(path, { bigint: true, throwIfNoEntry: false });
  return stat && `petinv/file/${stat.dev}:${stat.ino}`;
}

/**
 * The name of the directory entry `path` (its directory's device and inode, and its base name): the same
 * through every path to that directory, and there before the file is, so that two starts creating it
 * cannot both go ahead. Its neighbours (the journal, temporary files) share it.
 */
export function entryIdentityName(path: string): string {
  const stat = statSync(dirname(path), { bigint: true });
  return `petinv/entry/${stat.dev}:${stat.ino}/${hashed(basename(path))}`;
}

export interface Claim {
  readonly name: string;
  release(): Promise<void>;
}

export type ClaimAttempt =
  | { claimed: true; claim: Claim }
  | { claimed: false; heldBy: LockOwner | undefined };

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

/** Claims `name` with the kernel for this process, answering `record` to whoever asks who holds it. */
export async function claimAbstractName(name: string, record: string): Promise<ClaimAttempt> {
  const server: Server = createServer((socket) => {
    socket.on('error', () => {}); // An asker that went away.
    socket.end(record);
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ path: `\0${name}`, exclusive: true }, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    return { claimed: false, heldBy: await askHolder(name) };
  }
  // A claim never keeps the process alive by itself.
  server.unref();
  server.on('error', () => {});
  let released: Promise<void> | undefined;
  return {
    claimed: true,
    claim: {
      name,
      release: () => (released ??= new Promise<void>((resolve) => server.close(() => resolve()))),
    },
  };
}
