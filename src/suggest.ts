/** "Did you mean …?": the nearest of `known` by edit distance, or the one name `typed` begins, if likely a typo. */
export function nearestName(typed: string, known: readonly string[]): string | undefined {
  const lower = typed.toLowerCase();
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const name of known) {
    const distance = editDistance(lower, name.toLowerCase());
    if (distance < bestDistance) {
      best = name;
      bestDistance = distance;
    }
  }
  // Up to two edits, and never most of the word: "qa" is not a typo of "local".
  if (best !== undefined && bestDistance <= Math.min(2, Math.floor(typed.length / 2))) return best;
  const prefixed = lower.length >= 2 ? known.filter((name) => name.toLowerCase().startsWith(lower)) : [];
  return prefixed.length === 1 ? prefixed[0] : undefined;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps. */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => i + j),
  );
  const at = (i: number, j: number) => (rows[i] as number[])[j] as number;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const swapped = i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1];
      (rows[i] as number[])[j] = Math.min(
        at(i - 1, j) + 1,
        at(i, j - 1) + 1,
        at(i - 1, j - 1) + (a[i - 1] === b[j - 1] ? 0 : 1),
        swapped ? at(i - 2, j - 2) + 1 : Number.POSITIVE_INFINITY,
      );
    }
  return at(a.length, b.length);
}

/** " (did you mean production?)", or nothing. */
export function didYouMean(typed: string, known: readonly string[]): string {
  const nearest = nearestName(typed, known);
  return nearest === undefined ? '' : ` (did you mean ${nearest}?)`;
}

/**
 * A word of a command petinv suggests, safe to paste into a POSIX shell: as it is when it holds only
 * characters no shell treats specially, else in single quotes (a quote inside written `'\''`). A URL that
 * came from a service (a redirect's Location) can hold `$(…)`, `;` or a backtick (issue 21).
 */
export function shellWord(text: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(text)) return text;
  return `'${text.replaceAll("'", "'\\''")}'`;
}
