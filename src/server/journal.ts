import type { InventoryItem } from '../api/schemas';
import { type FileSystem, StorageError, writeFullyInBackground } from '../files/file-system';
import { journalLines } from './data-format';
import { closeQuietly } from './snapshot-file';

/** A batch of journal lines on its way to disk, and the one waiting for it. */
interface JournalCommit {
  bytes: Buffer;
  entries: number;
  done: (error: StorageError | null) => void;
  /** Where its lines begin in the journal, once its write has begun. */
  start: number;
  state: 'waiting' | 'writing' | 'syncing' | 'synced' | 'failed';
  error?: StorageError;
}

/**
 * The journal's commit pipeline (see data-file.ts for the file layout): appends written in order, each
 * fdatasynced, answered strictly in order, and a failed one cut back before anything else is written.
 */
export class Journal {
  /** Lines acknowledged since the last snapshot. */
  private appliedEntries: number;
  private bytes: number;
  /** A cut-back whose truncation failed: retried before the next append. */
  private repairTo: number | undefined;
  /** Appends not yet answered, in the order they were made: answered in that order. */
  private commits: JournalCommit[] = [];
  /** Writes and syncs handed to the thread pool and not yet back. */
  private operations = 0;
  private cuttingBack = false;
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
  }

  get entries(): number {
    return this.appliedEntries;
  }

  /**
   * Makes `changes` durable: calls `done` with null once their journal lines are fdatasynced, or with a
   * StorageError when they could not be written whole, and then their lines are cut from the journal.
   * Several appends may be under way: their writes go to the thread pool one after another (so the lines
   * land in order and the main thread never waits on a write behind a sync), each synced as soon as it is
   * written, and they are answered strictly in order. When one fails, nothing more is written until
   * everything under way is back; the journal is then cut back to where the failed one began, it is
   * refused, and the appends after it are written again from there.
   */
  append(changes: readonly InventoryItem[], done: (error: StorageError | null) => void): void {
    this.commits.push({
      bytes: journalLines(changes),
      entries: changes.length,
      done,
      start: 0,
      state: 'waiting',
    });
    this.writeNext();
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
      await this.files.fsync(this.fd);
      this.bytes = 0;
      this.appliedEntries = 0;
    } catch {
      // The journal stays longer than needed: replaying it over the new snapshot changes nothing.
    }
  }

  close(): void {
    closeQuietly(this.files, this.fd);
  }

  private writeNext(): void {
    if (this.commits.some((commit) => commit.state === 'writing' || commit.state === 'failed')) return;
    const commit = this.commits.find((candidate) => candidate.state === 'waiting');
    if (!commit) return;
    if (this.repairTo !== undefined) {
      try {
        this.files.ftruncateSync(this.fd, this.repairTo);
        this.repairTo = undefined;
      } catch (error) {
        this.fail(commit, new StorageError(`cannot cut back journal ${this.path}`, error));
        return;
      }
    }
    commit.state = 'writing';
    commit.start = this.bytes;
    this.operations++;
    writeFullyInBackground(this.files, this.fd, commit.bytes).then(
      () => {
        this.operations--;
        this.bytes = commit.start + commit.bytes.length;
        this.sync(commit);
        this.writeNext();
      },
      (error: unknown) => {
        this.operations--;
        this.fail(commit, new StorageError(`cannot append to journal ${this.path}`, error));
      },
    );
  }

  private sync(commit: JournalCommit): void {
    commit.state = 'syncing';
    this.operations++;
    this.files.fdatasync(this.fd).then(
      () => {
        this.operations--;
        commit.state = 'synced';
        this.answer();
      },
      (error: unknown) => {
        this.operations--;
        const cause = error ?? new Error('fdatasync failed');
        this.fail(commit, new StorageError(`cannot make journal ${this.path} durable`, cause));
      },
    );
  }

  private fail(commit: JournalCommit, error: StorageError): void {
    commit.state = 'failed';
    commit.error = error;
    this.answer();
  }

  /** Answers the appends at the head that are synced; at a failed one, once nothing is under way, cuts back. */
  private answer(): void {
    while (this.commits[0]?.state === 'synced') {
      const commit = this.commits.shift() as JournalCommit;
      this.appliedEntries += commit.entries;
      commit.done(null);
    }
    const failed = this.commits.find((commit) => commit.state === 'failed');
    if (!failed || this.operations > 0) {
      this.notifyIfSettled();
      return;
    }
    // Everything written after the failed one goes too: a later sync cannot vouch for lines before it.
    if (this.cuttingBack) return;
    this.cuttingBack = true;
    void this.cutBack(failed.start).then(() => {
      this.cuttingBack = false;
      const index = this.commits.indexOf(failed);
      // Answered ones cannot follow a failed one: answer() stops at the first that is not synced.
      this.commits.splice(index, 1);
      for (const later of this.commits) later.state = 'waiting';
      failed.done(failed.error as StorageError);
      this.writeNext();
      this.notifyIfSettled();
    });
  }

  private notifyIfSettled(): void {
    if (this.commits.length > 0) return;
    const waiters = this.settledWaiters;
    this.settledWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Truncates the journal to `length`, its last complete line; never rejects. */
  private async cutBack(length: number): Promise<void> {
    this.bytes = length;
    try {
      this.files.ftruncateSync(this.fd, length);
      // Durable before the failure is answered, so a crash cannot bring the refused lines back.
      await this.files.fsync(this.fd);
    } catch {
      this.repairTo = length;
    }
  }
}
