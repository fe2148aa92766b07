import { describeFileSystemError, type FileSystem } from '../files/file-system';
import { keepLockFile, putBackLockFile } from '../files/lock';
import type { AppOptions } from './app';
import { lockDataFile, refuseOtherNames } from './data-claim';
import { InventoryFile } from './data-file';
import type { DataFileFormat } from './data-format';
import { readInventoryFile } from './data-load';
import { createDataDirectory } from './data-path';
import { DEFAULT_SEED_COUNT } from './defaults';
import { type JournalReport, recoveredReport } from './journal-open';
import { InventoryStore, seedInventory } from './store';

export interface InventoryOptions {
  /** The data file; undefined keeps the inventory in memory only. */
  dataFile?: string;
  /** With a data file: load it, and never write it (a fixture that stays pristine). */
  inMemory?: boolean;
  /**
   * A journal damaged where no crash explains it: start from everything sound before the damage, and move
   * the journal aside (never removed). Without it, such a start is refused and every file left as it is.
   */
  recover?: boolean;
  /** The file layer the data file is written through; tests inject faults here. */
  files?: FileSystem;
  /** How many sample pets a new inventory gets. */
  seed?: number;
  log?: AppOptions['log'];
}

/** The inventory a start opens: in memory, loaded read-only, or durable in a locked data file. */
export interface OpenedInventory {
  store: InventoryStore;
  /** The data file the store writes through; undefined when nothing is written. */
  file?: InventoryFile;
  /** Releases the data file's lock; a no-op when none was taken. */
  unlock: () => Promise<void>;
  /** What the operator should know of the start: a lock record that could not be written, say. */
  warnings: string[];
  seeded: boolean;
  dataFormat: DataFileFormat | undefined;
  journal: JournalReport;
}

export async function openInventory(
  options: InventoryOptions,
  dataFile: string | undefined,
  readOnly: boolean,
): Promise<OpenedInventory> {
  const seed = () => seedInventory(options.seed ?? DEFAULT_SEED_COUNT);
  const unwritten = { unlock: async () => {}, warnings: [], journal: {} };
  if (!dataFile)
    return { ...unwritten, store: new InventoryStore(seed()), seeded: true, dataFormat: undefined };
  if (readOnly) {
    const loaded = readInventoryFile(dataFile, options.recover);
    const { damage } = loaded.journal;
    return {
      ...unwritten,
      store: new InventoryStore(loaded.items),
      seeded: false,
      dataFormat: loaded.format,
      // Loaded, never written: a torn commit stays in the file, and out of the inventory; so does damage.
      journal: damage?.kind === 'damaged' ? { recovered: recoveredReport(loaded.journal, damage) } : {},
    };
  }
  createDataDirectory(dataFile, options.files);
  const lockPath = `${dataFile}.lock`;
  const foundLock = keepLockFile(lockPath);
  const lock = await lockDataFile(dataFile, options.files);
  const unlock = () => lock.release();
  const warnings = lock.recordProblem
    ? [
        `the lock record ${dataFile}.lock could not be written (${describeFileSystemError(lock.recordProblem)}); this serve still holds the data file, by its identity`,
      ]
    : [];
  const logFault = (fault: string) => options.log?.({ method: '-', path: dataFile, fault });
  let file: InventoryFile | undefined;
  try {
    refuseOtherNames(dataFile);
    const opened = await InventoryFile.open(dataFile, seed, {
      files: options.files,
      // A snapshot is a new file renamed into place: the lock follows it to its new identity.
      onSnapshotReplaced: () =>
        void lock
          .follow()
          .catch((error: unknown) => logFault(`cannot lock the new snapshot: ${(error as Error).message}`)),
      recover: options.recover,
    });
    file = opened.file;
    // A data file this start created has an identity only now.
    await lock.follow();
    const store = new InventoryStore(opened.items, file, {
      onSnapshotError: (error) => logFault(`${(error as Error).message}; the journal keeps every change`),
    });
    return {
      store,
      file,
      unlock,
      warnings,
      seeded: opened.created,
      dataFormat: file.format,
      journal: opened.journal,
    };
  } catch (error) {
    await file?.close();
    await unlock();
    putBackLockFile(lockPath, foundLock);
    throw error;
  }
}
