/**
 * What a bulk run is told by the command that starts it (`petinv set --file F`, `petinv set -`): bulk's
 * own options, which the command makes from its flags. Nothing here knows the CLI's flags.
 */
export interface BulkOptions {
  /** The file to read the updates from; stdin when undefined or `-`. */
  file?: string;
  /** Send nothing if any input line is bad. */
  strict?: boolean;
  /** Each result as a JSON line as it completes (--ndjson, -o ndjson). */
  ndjson?: boolean;
}
