import { readPetId, readQuantity } from '../bulk/numbers';
import { abortedError, usageError } from '../errors';
import type { CommandContext } from '../output/context';
import { confirm } from '../output/prompt';

/** Checks shared by the commands that change stock: done before any request, so a typo sends nothing. */

/** What was read, or the words saying what is wrong with it as a usage error. */
function orUsageError<T>(read: T | string): T {
  if (typeof read === 'string') throw usageError(read);
  return read;
}

export const parsePetIdArgument = (text: string) => orUsageError(readPetId(text));
export const parseQuantityArgument = (text: string) => orUsageError(readQuantity(text, 'quantity'));

/** A change rather than a quantity: `+5` and `-2` are how people write one. */
export function parseIntegerArgument(text: string, name: string): number {
  const value = Number(text);
  if (!/^[-+]?\d+$/.test(text) || !Number.isSafeInteger(value))
    throw usageError(`${name} "${text}" is not an integer`);
  return value;
}

/**
 * On production, a person at a terminal confirms a change; --yes, or no terminal, skips the question. It
 * names `where` the change goes, as every message does (connect.ts): never "in production" for a local serve.
 */
export async function confirmChange(
  { envName, where }: { envName: string; where: string },
  question: string,
  yes: boolean | undefined,
  context: CommandContext,
) {
  if (envName !== 'production' || yes || !context.stdin.isTTY) return;
  if (!(await confirm(`${question} in ${where}?`, context.stdin, context.stderr)))
    throw abortedError('nothing changed: not confirmed');
}
