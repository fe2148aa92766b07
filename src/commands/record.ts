import { stateDirectory } from '../config/paths';
import { stringifyJson } from '../contract/json';
import { type History, openHistory } from '../history/store';
import type { CommandContext } from '../output/context';

/**
 * The history of write runs for the service at `baseUrl`, or of the store it said it serves (`storeId`,
 * see src/history/store.ts). What goes wrong with it is a warning on stderr (a JSON line with --json),
 * never the command's failure.
 */
export function historyFor(baseUrl: string, context: CommandContext, storeId?: string | null): History {
  return openHistory({
    directory: stateDirectory(context.env),
    baseUrl,
    storeId,
    warn: (message) => historyWarning(context, message),
  });
}

/** A warning about the history on stderr: a JSON line with --json. */
export function historyWarning(context: CommandContext, message: string): void {
  context.stderr.write(
    context.json ? `${stringifyJson({ warning: { message } })}\n` : `petinv: warning: ${message}\n`,
  );
}
