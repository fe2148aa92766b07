import { Option } from '@commander-js/extra-typings';
import { usageError } from '../errors';

/** The parsers of option declarations (src/program/): a bad value is a usage error before anything runs. */

/** A flag's text, refused when empty: `--env "$TARGET"` with TARGET unset must not write to the default. */
export function nonEmptyText(text: string, flag: string): string {
  if (text === '') throw usageError(`${flag} is empty: give it a value (an unset shell variable?)`);
  return text;
}

/**
 * An option whose text `parse` turns into its value. A short option's value may follow an `=` (`-o=json`, as
 * kubectl users and completion write it): commander hands over `=json`, so the `=` is dropped; no value of
 * petinv's short options (a format, an environment name) can begin with one.
 */
export function parsedOption<Usage extends string, T>(
  flags: Usage,
  description: string,
  parse: (text: string, flag: string) => T,
) {
  const option = new Option(flags, description);
  return option.argParser((text) =>
    parse(option.short !== undefined && text.startsWith('=') ? text.slice(1) : text, option.long ?? flags),
  );
}

/**
 * An option that takes one of `choices`, declared once (gh's StringEnumFlag): commander keeps the list for
 * help and completion, and the parser refuses anything else in petinv's words, before anything runs.
 */
export function choiceOption<Usage extends string, const T extends string>(
  flags: Usage,
  description: string,
  choices: readonly T[],
) {
  const oneOf = choices.join(', ');
  const check = (text: string, flag: string) => {
    if (text === '') throw usageError(`${flag} is empty: give it one of ${oneOf}`);
    if (!(choices as readonly string[]).includes(text))
      throw usageError(`${flag} ${text}: must be one of ${oneOf}`);
    return text as T;
  };
  const option = parsedOption(flags, description, check);
  option.argChoices = [...choices];
  return option;
}

/** What list's --sort takes; list.ts sorts by each. */
export const SORT_KEYS = ['petId', 'quantity', 'status'] as const;

export const wholeNumber = <Usage extends string>(
  flags: Usage,
  description: string,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
) =>
  parsedOption(flags, description, (text, flag) => {
    const value = Number(text);
    if (!/^\d+$/.test(text) || value < min || value > max)
      throw usageError(`${flag} ${text}: must be a whole number from ${min} to ${max}`);
    return value;
  });

/** A default, declared once: commander applies the value, and help shows the text after the description. */
export const byDefault = <const T extends number | string>(value: T, shown = `default ${value}`) =>
  [value, shown] as const;

/** `--latency 50` or `--latency 50-200`: milliseconds, or a range drawn from at random. */
export function parseLatency(text: string, flag: string): { min: number; max: number } {
  const match = /^(\d+)(?:-(\d+))?$/.exec(text);
  const min = Number(match?.[1]);
  const max = match?.[2] === undefined ? min : Number(match[2]);
  if (!match || max < min || max > 60_000)
    throw usageError(`${flag} ${text}: must be milliseconds, MS or MIN-MAX, at most 60000`);
  return { min, max };
}

export function parseFailRate(text: string, flag: string): number {
  const rate = Number(text);
  if (text.trim() === '' || !(rate >= 0 && rate <= 1))
    throw usageError(`${flag} ${text}: must be a fraction from 0 to 1`);
  return rate;
}

/** `--interval 2` or `0.5`: seconds, from a tenth of a second to a day, as milliseconds. */
export function parseIntervalSeconds(text: string, flag: string): number {
  const seconds = Number(text);
  if (!/^\d+(\.\d+)?$/.test(text) || seconds < 0.1 || seconds > 86_400)
    throw usageError(`${flag} ${text}: must be seconds from 0.1 to 86400`);
  return Math.round(seconds * 1000);
}

/** A bulk run's connections. Not a commander default: a single `set` must tell whether it was given. */
export const DEFAULT_CONCURRENCY = 8;

/**
 * Updates a bulk run keeps on each connection at once (HTTP/1.1 pipelining; 1 turns it off): none idles
 * while an answer travels back. 8 rather than 4: 0.94 of wrk's rate against 0.73 (docs/performance.md).
 */
export const DEFAULT_PIPELINING = 8;

export const bulkShape = (concurrency?: number, pipelining?: number) => ({
  connections: concurrency ?? DEFAULT_CONCURRENCY,
  pipelining: pipelining ?? DEFAULT_PIPELINING,
});
