/**
 * Short options written together, read as commander reads them: `-vo json` is -v -o json, and in
 * `-vojson` (or `-vo=json`) the o takes the rest of the word. What reads a command line before commander
 * does (the launcher's command word, whether a failure is JSON, the usage hint, completion) reads such a
 * word here, each with what it knows of which options take a value.
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
 * `word` as short options written together, or undefined when it is none (`--env`, `-`, `list`).
 * `takesValue` says whether a flag (`-o`) takes a value: true, false, or undefined for no such option,
 * which stops the reading there.
 */
export function readShortGroup(
  word: string,
  takesValue: (flag: string) => boolean | undefined,
): ShortGroup | undefined {
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
