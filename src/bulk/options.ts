import type { History } from '../history/store';
import type { OutputChoice } from '../output/choose';
import type { Exporter } from '../output/exporter';
import type { BulkRow } from './results';

/** A bulk run's own options: the command (set, undo) turns its flags into them. */
export interface PipelineOptions {
  dryRun: boolean;
  /** Send every row, even one whose pet already holds its quantity. */
  all: boolean;
  /** Write a row even when its `from` no longer matches the pet's quantity. */
  force: boolean;
  concurrency: number;
  /** Results as JSON lines on stdout as they complete. */
  ndjson: boolean;
  /** How a dry run prints its plan. */
  output: OutputChoice;
  /** -o table|tsv|csv on a real run: a row per result. */
  rows?: Exporter<BulkRow>;
  /** Asks before writing (on production, at a terminal); throws to stop the run. */
  confirm: (question: string) => Promise<void>;
  question: (updates: number) => string;
  /** What the history calls the run (`set --file counts.csv`, `undo ID`). */
  command: string;
  /** What a stopped run tells a person to do to apply the rest. */
  again: string;
  /** What settles the updates whose outcome is unknown (`apply the same input again`): sends them once more. */
  resend: string;
  /** What takes back what the run wrote, named when a signal stops it: none for an undo (that re-applies). */
  takenBackBy?: string;
  /** An undo's run: each row's `from` is what the run undone left, not what a person read. */
  undo?: boolean;
  /** Where the run is recorded, opened once the service was read (it may say which store it is); none, and nothing is. */
  history?: () => History;
}
