import { parsePetId } from '../api/schemas';
import { PetinvError, usageError } from '../errors';
import { confirm } from '../output/prompt';
import type { CommandContext } from './context';

/** Checks shared by the commands that change stock: done before any request, so a typo sends nothing. */

export function parsePetIdArgument(text: string): bigint {
  const petId = parsePetId(text);
  if (petId === undefined) throw usageError(`petId "${text}" is not an integer within int64`);
  return petId;
}

/** A whole-number option such as `--limit 20`; undefined when the option was not given. */
export function parseWholeNumber(
  text: string | undefined,
  flag: string,
  min: number,
  max: number,
): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max) {
    throw usageError(`${flag} ${text}: must be a whole number from ${min} to ${max}`);
  }
  return value;
}

export function parseIntegerArgument(text: string, name: string): number {
  const value = Number(text);
  if (!/^[-+]?\d+$/.test(text) || !Number.isSafeInteger(value))
    throw usageError(`${name} "${text}" is not an integer`);
  return value;
}

/** On production, a person at a terminal confirms a change; --yes, or no terminal, skips the question. */
export async function confirmChange(
  envName: string,
  question: string,
  yes: boolean | undefined,
  context: CommandContext,
) {
  if (envName !== 'production' || yes || !context.stdin.isTTY) return;
  if (!(await confirm(`${question} in production?`, context.stdin, context.stderr))) {
    throw new PetinvError('aborted', 'nothing changed: not confirmed', { code: 'aborted' });
  }
}
