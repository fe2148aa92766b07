/**
 * The `summary` object a bulk run prints with --json, whole: every count 0, not stopped, nothing left
 * unapplied, but for the counts given. A test compares with it exactly, as with the literal it replaces.
 */
export const bulkSummary = (counts: Record<string, number>) => ({
  updated: 0,
  changed: 0,
  alreadyRight: 0,
  failed: 0,
  mismatched: 0,
  unknown: 0,
  conflicts: 0,
  skipped: 0,
  notCounted: 0,
  notSent: 0,
  stopped: null,
  notApplied: [],
  maybeApplied: [],
  ...counts,
});
