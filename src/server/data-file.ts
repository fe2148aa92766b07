import { constants } from 'node:fs';
import { mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import { parseInventoryJson } from '../api/json';
import { describeIssues, type InventoryItem, InventoryList } from '../api/schemas';
import { configError } from '../errors';

/** The data file wraps the very bytes GET /inventory serves, so a write never serializes anew. */
const FORMAT = 'petinv-inventory';
const PREFIX = Buffer.from(`{"format":"${FORMAT}","version":1,"items":`);
const SUFFIX = Buffer.from('}\n');

const DataFile = z.object({ format: z.literal(FORMAT), version: z.literal(1), items: InventoryList });

/** Reads a data file; undefined when there is none. A file that fails to load is never touched. */
export async function loadDataFile(path: string): Promise<InventoryItem[] | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw configError(`cannot read data file ${path}: ${(error as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = parseInventoryJson(text);
  } catch (error) {
    throw configError(
      `data file ${path} is not valid JSON (${(error as Error).message}); it was left as it is`,
    );
  }
  const parsed = DataFile.safeParse(raw);
  if (!parsed.success) {
    throw configError(
      `data file ${path} does not hold an inventory: ${describeIssues(parsed.error)}; it was left as it is`,
    );
  }
  const seen = new Set<bigint>();
  for (const item of parsed.data.items) {
    if (seen.has(item.petId))
      throw configError(`data file ${path} lists petId ${item.petId} twice; it was left as it is`);
    seen.add(item.petId);
  }
  return parsed.data.items;
}

/**
 * Replaces the data file so that a crash at any moment leaves either the old or the new file:
 * write a temporary file, fsync it, rename it over the old one, fsync the directory.
 */
export async function writeDataFile(path: string, listBody: Buffer): Promise<void> {
  const temporary = `${path}.tmp`;
  const file = await open(temporary, 'w', 0o644);
  try {
    await file.writev([PREFIX, listBody, SUFFIX]);
    await file.sync();
  } finally {
    await file.close();
  }
  await rename(temporary, path);
  const directory = await open(dirname(path), constants.O_RDONLY);
  try {
    await directory.sync();
  } finally {
    await directory.close();
  }
}

export async function ensureDataDirectory(path: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Claims the data file for this process with a `.lock` file holding its pid. A lock left by a process
 * that is gone (kill -9) is taken over; one held by a live process refuses the start.
 */
export async function lockDataFile(path: string): Promise<() => Promise<void>> {
  const lockPath = `${path}.lock`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const lock = await open(lockPath, 'wx', 0o644);
      await lock.writeFile(`${process.pid}\n`);
      await lock.close();
      return async () => {
        await unlink(lockPath).catch(() => {});
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw configError(`cannot lock data file ${path}: ${(error as Error).message}`);
      }
      const owner = Number.parseInt(await readFile(lockPath, 'utf8').catch(() => ''), 10);
      if (Number.isInteger(owner) && owner !== process.pid && isRunning(owner)) {
        throw configError(
          `data file ${path} is in use by another petinv serve (pid ${owner}); stop it or choose another file with --data`,
        );
      }
      await unlink(lockPath).catch(() => {});
    }
  }
  throw configError(`cannot lock data file ${path}: ${lockPath} keeps reappearing`);
}
