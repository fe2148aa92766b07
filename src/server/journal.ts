import type { InventoryItem } from '../contract/schemas';
import { type FileSystem, StorageError, writeFullyInBackground } from '../files/file-system';
import { encodeCommit, JOURNAL_HEADER } from './journal-format';
import { closeQuietly } from './snapshot-file';

type PendingCommit = { changes: readonly InventoryItem[]; done: (error: StorageError | null) => void };

/**
 * The journal's commit pipeline, as docs/serve-durability.md describes it: commits appended in turn, each
 * durable once its write returns (O_DSYNC), answered in order; a failed write cut back, the cut synced,
 * before anything else. No zeros are laid down ahead: a zeroed sector would look like room not yet used.
 */
export class Journal {
  /** Updates acknowledged since the last snapshot. */
  entries: number;
  /** Where the acknowledged commits end: the durable length of the file when nothing is owed. */
  private bytes: number;
  private nextSequence: number;
  /** A cut to this length whose truncation or sync failed: made, and synced, before the next write. */
  private repairTo: number | undefined;
  /** Commits not yet answered, in the order they were made: the first one may be under way. */
  private commits: PendingCommit[] = [];
  /** Waiting for every commit to be answered, cut-backs included. */
  private readonly settledWaiters: (() => void)[] = [];

  constructor(
    readonly path: string,
    private readonly fd: number,
    start: { entries: number; bytes: number; commits: number },
    private readonly files: FileSystem,
  ) {
    this.entries = start.entries;
    this.bytes = start.bytes;
    this.nextSequence = start.commits + 1;
  }

  /** Whether bytes that must go are still in the file (or not durably gone): emptying it settles that. */
  get owesCutBack(): boolean {
    return this.repairTo !== undefined;
  }

  /**
   * Makes `changes` durable: calls `done` with null once their commit is on disk, or with a StorageError
   * (and then it is cut from the journal). Commits made meanwhile wait for the one under way.
   */
  append(changes: readonly InventoryItem[], done: (error: StorageError | null) => void): void {
    this.commits.push({ changes, done });
    if (this.commits.length === 1) this.writeNext();
  }

  settled(): Promise<void> {
    if (this.commits.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.settledWaiters.push(resolve));
  }

  /**
   * Empties the journal (its header stays) once a new snapshot holds everything in it. No commit may be
   * under way. When the cut or its sync fails, it is owed: made and synced before the next commit.
   */
  async empty(): Promise<void> {
    // Counted from here at once: the new snapshot holds these updates, whether or not the cut is durable.
    this.entries = 0;
    this.nextSequence = 1;
    this.bytes = JOURNAL_HEADER.length;
    this.repairTo = JOURNAL_HEADER.length;
    await this.repair();
  }

  close(): void {
    closeQuietly(this.files, this.fd);
  }

  /** Writes the first commit, which nothing is writing yet; when there is none, wakes settled() waiters. */
  private writeNext(): void {
    const commit = this.commits[0];
    if (!commit) {
      for (const resolve of this.settledWaiters.splice(0)) resolve();
      return;
    }
    if (this.repairTo === undefined) this.write(commit);
    else
      void this.repair().then((failure) => {
        if (failure) this.finish(commit, new StorageError(`cannot cut back journal ${this.path}`, failure));
        else this.write(commit);
      });
  }

  private write(commit: PendingCommit): void {
    const start = this.bytes;
    const bytes = encodeCommit(this.nextSequence, commit.changes);
    writeFullyInBackground(this.files, this.fd, bytes, start).then(
      () => {
        this.bytes = start + bytes.length;
        this.nextSequence++;
        this.entries += commit.changes.length;
        this.finish(commit, null);
      },
      (error: unknown) => {
        // Whatever part of it reached the file goes, durably, before the failure is answered: a crash
        // must not bring the refused commit back, nor leave it under the next one.
        this.repairTo = start;
        void this.repair().then(() =>
          this.finish(commit, new StorageError(`cannot append to journal ${this.path}`, error)),
        );
      },
    );
  }

  /** Answers the first commit and starts the next: the disk works again before the answers go out. */
  private finish(commit: PendingCommit, error: StorageError | null): void {
    this.commits.shift();
    if (this.commits.length > 0) this.writeNext();
    commit.done(error);
    if (this.commits.length === 0) this.writeNext();
  }

  /**
   * Cuts the file to `repairTo` and syncs it; the failure when either fails (the cut stays owed), else
   * undefined. A cut that is not durable is not made: a crash could bring back what it cut.
   */
  private async repair(): Promise<unknown> {
    const length = this.repairTo;
    if (length === undefined) return undefined;
    try {
      this.files.ftruncateSync(this.fd, length);
      await this.files.fsync(this.fd);
    } catch (error) {
      return error;
    }
    if (this.repairTo === length) this.repairTo = undefined;
    return undefined;
  }
}
