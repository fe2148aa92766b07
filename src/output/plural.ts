/** `1 pet`, `2 pets`: a count with its noun, in the one place English plurals are made. */
export function plural(count: number | bigint, noun: string, nouns = `${noun}s`): string {
  return `${count} ${count === 1 || count === 1n ? noun : nouns}`;
}
