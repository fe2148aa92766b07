/**
 * "Did you mean …?" for a name a person typed: the nearest of `known` by edit distance (a swap of two
 * neighbouring letters counts as one edit, as commander counts for command names), or the one name it
 * begins, or undefined when nothing is close enough to be a likely typo.
 */
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
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const row = rows[i] as number[];
      const above = rows[i - 1] as number[];
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let distance = Math.min(
        (above[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (above[j - 1] as number) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        distance = Math.min(distance, ((rows[i - 2] as number[])[j - 2] as number) + 1);
      row[j] = distance;
    }
  }
  return (rows[a.length] as number[])[b.length] as number;
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
