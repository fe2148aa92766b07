import { performance } from 'node:perf_hooks';
import { updateConfigFile } from '../config/file';
import { apiKeyProblem, MAX_API_KEY_LENGTH, maskKey } from '../config/settings';
import { configError, PetinvError, usageError } from '../errors';
import { plural } from '../output/plural';
import { readAll, readHidden } from '../output/prompt';
import type { GlobalFlags } from '../program';
import { connect, loadSettings } from './connect';
import type { CommandContext } from './context';

/**
 * Asks the service, where the key would go once stored, whether it accepts the key: a refused key, or one
 * that cannot be checked, is not stored (`--no-verify` stores it anyway). Returns what to tell the user.
 */
async function verifyKey(flags: GlobalFlags, context: CommandContext, envName: string, key: string) {
  const unchecked = `store it unchecked: petinv login --env ${envName} --no-verify`;
  if (loadSettings(flags, context).baseUrl.value === undefined)
    return `not checked: ${envName} has no URL yet (petinv env set-url ${envName} <url>)`;
  try {
    const { client } = await connect(flags, context, { apiKey: key });
    const started = performance.now();
    const items = await client.listInventory();
    return `the service accepted it (${plural(items.length, 'pet')} in ${Math.round(performance.now() - started)} ms)`;
  } catch (error) {
    if (!(error instanceof PetinvError)) throw error;
    const { status, code, message } = error.body;
    const why =
      error.kind === 'auth'
        ? `the service in ${envName} refused this API key (${status} ${code}: ${message}); check the key`
        : `cannot check the API key for ${envName}: ${error.message}`;
    throw new PetinvError(error.kind, `${why}; nothing was stored; or ${unchecked}`, error.body);
  }
}

/** Stores an API key for one environment. The key is read, never taken from the command line. */
export async function runLogin(flags: GlobalFlags & { verify?: boolean }, context: CommandContext) {
  const envName = loadSettings(flags, context).env.value;
  const key = context.stdin.isTTY
    ? await readHidden(`API key for ${envName} (input hidden): `, context.stdin, context.stderr)
    : // A key past the limit is refused below; reading stops soon after it, whatever is piped in.
      (await readAll(context.stdin, MAX_API_KEY_LENGTH + 2)).replace(/\r?\n$/, '');
  const trimmed = key.trim();
  if (trimmed === '')
    throw usageError(
      `no API key given for ${envName}; type it at the prompt, or pipe it: printf %s "$KEY" | petinv login --env ${envName}`,
    );
  const problem = apiKeyProblem(trimmed);
  if (problem) throw configError(`the API key for ${envName} was not stored: it ${problem}`);
  const checked =
    flags.verify === false ? 'not checked (--no-verify)' : await verifyKey(flags, context, envName, trimmed);
  const path = await updateConfigFile((config) => {
    config.environments[envName] = { ...config.environments[envName], apiKey: trimmed };
  }, context.env);
  context.stderr.write(
    `petinv: stored the API key ${maskKey(trimmed)} for ${envName} in ${path}; ${checked}\n`,
  );
}

export async function runLogout(flags: GlobalFlags, context: CommandContext) {
  const envName = loadSettings(flags, context).env.value;
  let had = false;
  const path = await updateConfigFile((config) => {
    const stored = config.environments[envName];
    had = stored?.apiKey !== undefined;
    if (stored) delete stored.apiKey;
  }, context.env);
  context.stderr.write(
    had
      ? `petinv: removed the API key for ${envName} from ${path}\n`
      : `petinv: no API key was stored for ${envName}\n`,
  );
}
