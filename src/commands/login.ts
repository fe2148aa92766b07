import { updateConfigFile } from '../config/file';
import { apiKeyProblem, MAX_API_KEY_LENGTH, maskKey } from '../config/settings';
import { configError, usageError } from '../errors';
import { readAll, readHidden } from '../output/prompt';
import type { GlobalFlags } from '../program';
import { loadSettings } from './connect';
import type { CommandContext } from './context';

/** Stores an API key for one environment. The key is read, never taken from the command line. */
export async function runLogin(flags: GlobalFlags, context: CommandContext) {
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
  const path = await updateConfigFile((config) => {
    config.environments[envName] = { ...config.environments[envName], apiKey: trimmed };
  }, context.env);
  context.stderr.write(`petinv: stored the API key ${maskKey(trimmed)} for ${envName} in ${path}\n`);
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
