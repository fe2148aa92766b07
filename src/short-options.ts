/**
 * Short options written together, read as commander reads them (`-vo json` is -v -o json, in `-vojson`
 * the o takes the rest of the word), for what reads a command line before commander does.
 */
export interface ShortGroup {
  /** The flags read before the first that takes a value (`-v` of `-vo`), in order. */
  flags: string[];
  /** The first flag that takes a value, and the rest of the word after it: '' when the value is the next word. */
  valued?: { flag: string; rest: string };
  /** A flag no option answers to, where reading stopped (only when `takesValue` says so). */
  unknown?: string;
}

/**
 * `word` as short options, or undefined when it is none (`--env`, `-`, `list`). `takesValue` says whether
 * a flag takes a value; undefined (no such option) stops the reading there.
 */
export function readShortGroup(word: string, takesValue: (flag: string) => boolean | undefined) {
  if (!/^-[^-]/.test(word)) return undefined;
  const flags: string[] = [];
  for (let at = 1; at < word.length; at++) {
    const flag = `-${word[at]}`;
    const valued = takesValue(flag);
    if (valued === undefined) return { flags, unknown: flag };
    if (valued) return { flags, valued: { flag, rest: word.slice(at + 1) } };
    flags.push(flag);
  }
  return { flags };
}
