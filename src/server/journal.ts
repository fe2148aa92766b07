import type { InventoryItem } from '../contract/schemas';
import { type FileSystem, isOutOfSpace, StorageError, writeFullyInBackground } from '../files/file-system';
import { journalLines } from './data-format';
import { closeQuietly } from './snapshot-file';

/** A batch of journal lines on its way to disk, and the one waiting for it. */
interface JournalCommit {
  bytes: Buffer;
  entries: number;
  done: (error: StorageError | null) => void;
  /** Where its lines begin in the journal, once its write has begun. */
  start: number;
}

/** The least room laid down ahead of the journal's lines at a time; more as the journal grows. */
const MIN_ROOM_AHEAD = 16 * 1024;
/** The most: a journal's zeros never hold more than this of a nearly full disk's space. */
const MAX_ROOM_AHEAD = 1024 * 1024;

/**
 * Zeros are laid down only while the disk keeps as much free again: after a crash, the next start must
 * find room for its lock before it gives them back.
 */
const FREE_SPACE_PER_ROOM = 2;

/** The zeros did not fit (no space, quota, or the process's file size limit): the lines alone may. */
function refusesRoom(error: unknown): boolean {
  return isOutOfSpace(error) || (error as NodeJS.ErrnoException).code === 'EFBIG';
}

/**
 * The journal's commit pipeline (see data-file.ts for the file layout): appends written one after another,
 * each durable once its write returns (the journal is opened with O_DSYNC), answered in order, and a failed
 * one cut back before anything else is written.
 *
 * Each append is written at the end of the last one, over zeros an earlier write laid down ahead of it: a
 * write that makes the file longer must also make its new length durable, a commit of the file system's
 * own journal, where one that overwrites needs only its data on disk (a quarter to a third less time per
 * append on ext4 here). An append that finds no such room writes zeros after its lines, as much room as
 * the journal already holds, while the disk keeps as much free again. When they do not fit, it writes its
 * lines alone, and no more zeros are laid until the journal is emptied: a nearly full disk is not filled
 * to the brim at every commit. Whatever follows the last complete line is cut off when the journal is
 * opened (data-file.ts), so every append lands on zeros or past the end, and a crash mid-append leaves
 * its lines, whole or torn, followed by zeros.
 */
export class Journal {
  /** Lines acknowledged since the last snapshot. */
  private appliedEntries: number;
  /** Where the acknowledged lines end. */
  private bytes: number;
  /** Where the file ends: its lines, then zeros. */
  private fileLength: number;
  /** False once zeros did not fit, until the journal is emptied. */
  private layRoom = true;
  /** A cut-back whose truncation failed: retried before the next append. */
  private repairTo: number | undefined;
  /** Appends not yet answered, in the order they were made: the first one may be under way. */
  private commits: JournalCommit[] = [];
  /** Waiting for every append to be answered, cut-backs included. */
  private settledWaiters: (() => void)[] = [];

  constructor(
    readonly path: string,
    private readonly fd: number,
    start: { entries: number; bytes: number },
    private readonly files: FileSystem,
  ) {
    this.appliedEntries = start.entries;
    this.bytes = start.bytes;
    this.fileLength = start.bytes;
  }

  get entries(): number {
    return this.appliedEntries;
  }

  /** Whether refused lines are still in the file, their cut-back having failed: emptying it settles that. */
  get owesCutBack(): boolean {
    return this.repairTo !== undefined;
  }

  /**
   * Makes `changes` durable: calls `done` with null once their journal lines are on disk, or with a
   * StorageError when they could not be written whole, and then their lines are cut from the journal.
   * Appends made while one is under way wait for it: its write is its sync (O_DSYNC), a single trip to
   * the thread pool, and the batch behind it grows meanwhile. When one fails, the journal is cut back to
   * where it began, it is refused, and the next is written from there.
   */
  append(changes: readonly InventoryItem[], done: (error: StorageError | null) => void): void {
    this.commits.push({
      bytes: journalLines(changes),
      entries: changes.length,
      done,
      start: 0,
    });
    if (this.commits.length === 1) this.writeNext();
  }

  /** Resolves once no append is under way. */
  settled(): Promise<void> {
    if (this.commits.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.settledWaiters.push(resolve));
  }

  /** Empties the journal once a new snapshot holds everything in it. No append may be under way. */
  async empty(): Promise<void> {
    try {
      this.files.ftruncateSync(this.fd, 0);
    } catch {
      // The journal stays longer than needed: replaying it over the new snapshot changes nothing.
      return;
    }
    // The file is empty now, whether or not that is durable yet: a later cut-back must measure from
    // here, or ftruncate would pad the journal with NUL bytes up to its old length. A cut-back still
    // owed is done too: the refused lines went with the rest.
    this.bytes = 0;
    this.fileLength = 0;
    this.layRoom = true;
    this.appliedEntries = 0;
    this.repairTo = undefined;
    try {
      await this.files.fsync(this.fd);
    } catch {
      // A crash may bring the old lines back, ahead of any appended later: replayed over the new
      // snapshot they change nothing, and the later ones follow them.
    }
  }

  /**
   * Gives the zeros after the lines back to the disk, for a snapshot that may need the space: it empties
   * the journal next anyway. No append may be under way. Not synced: zeros a crash brings back are harmless.
   */
  trimRoom(): void {
    if (this.fileLength <= this.bytes || this.repairTo !== undefined) return;
    try {
      this.files.ftruncateSync(this.fd, this.bytes);
      this.fileLength = this.bytes;
    } catch {
      // The snapshot goes ahead without the space; it fails on its own if it needs it.
    }
  }

  close(): void {
    closeQuietly(this.files, this.fd);
  }

  /** Writes the first append, which nothing is writing yet; when there is none, wakes settled() waiters. */
  private writeNext(): void {
    const commit = this.commits[0];
    if (!commit) {
      const waiters = this.settledWaiters;
      this.settledWaiters = [];
      for (const resolve of waiters) resolve();
      return;
    }
    if (this.repairTo !== undefined) {
      try {
        this.files.ftruncateSync(this.fd, this.repairTo);
        this.repairTo = undefined;
      } catch (error) {
        this.finish(commit, new StorageError(`cannot cut back journal ${this.path}`, error));
        return;
      }
    }
    commit.start = this.bytes;
    const end = commit.start + commit.bytes.length;
    this.write(commit, end > this.fileLength ? this.roomToLay() : 0);
  }

  /** How many zeros to lay down after the lines of a commit that passes the file's end. */
  private roomToLay(): number {
    if (!this.layRoom) return 0;
    const room = Math.min(MAX_ROOM_AHEAD, Math.max(MIN_ROOM_AHEAD, this.bytes));
    const free = this.files.freeSpace(this.path);
    return free === undefined || free >= room * FREE_SPACE_PER_ROOM ? room : 0;
  }

  /** Writes `commit` where it starts, followed by `roomAhead` zeros. */
  private write(commit: JournalCommit, roomAhead: number): void {
    const buffer = roomAhead > 0 ? Buffer.concat([commit.bytes, Buffer.alloc(roomAhead)]) : commit.bytes;
    writeFullyInBackground(this.files, this.fd, buffer, commit.start).then(
      () => {
        this.bytes = commit.start + commit.bytes.length;
        this.fileLength = Math.max(this.fileLength, commit.start + buffer.length);
        this.appliedEntries += commit.entries;
        this.finish(commit, null);
      },
      (error: unknown) => {
        // Whatever part of it reached the file goes: durable before the failure is answered, so a crash
        // cannot bring the refused lines back.
        void this.cutBack(commit.start).then(() => {
          // Only once the failed write is cut back may the lines go where it began.
          if (roomAhead > 0 && refusesRoom(error) && this.repairTo === undefined) {
            this.layRoom = false;
            this.write(commit, 0);
            return;
          }
          this.finish(commit, new StorageError(`cannot append to journal ${this.path}`, error));
        });
      },
    );
  }

  /** Answers the first append and starts the next: the disk works again before the answers go out. */
  private finish(commit: JournalCommit, error: StorageError | null): void {
    this.commits.shift();
    if (this.commits.length > 0) this.writeNext();
    commit.done(error);
    if (this.commits.length === 0) this.writeNext();
  }

  /** Truncates the journal to `length`, its last complete line; never rejects. */
  private async cutBack(length: number): Promise<void> {
    // When the truncation fails, the next write makes it first (repairTo): either way the file ends here.
    this.bytes = length;
    this.fileLength = length;
    try {
      this.files.ftruncateSync(this.fd, length);
      await this.files.fsync(this.fd);
    } catch {
      this.repairTo = length;
    }
  }
}
