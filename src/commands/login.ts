import { performance } from 'node:perf_hooks';
import { readConfigFile, updateConfigFile } from '../config/file';
import {
  apiKeyProblem,
  knownEnvironments,
  MAX_API_KEY_LENGTH,
  maskKey,
  type Settings,
  storedEnvironment,
} from '../config/settings';
import { loadSettings } from '../config/target';
import { abortedError, configError, PetinvError, usageError } from '../errors';
import type { CommandContext } from '../output/context';
import { plural } from '../output/plural';
import { confirm, readAll, readHidden } from '../output/prompt';
import { didYouMean } from '../suggest';
import { connect } from './connect';
import type { GlobalFlags } from './flags';

/** login's flags (declared for commander in src/program/settings.ts). */
export type LoginFlags = GlobalFlags & { create?: boolean; verify: boolean };

/**
 * A key for an environment with no URL is sent nowhere, and the name may be a typo (`--env stagin`): a
 * person at a terminal confirms, a script says so with --create.
 */
async function confirmEnvironmentWithoutUrl(envName: string, context: CommandContext) {
  const known = knownEnvironments(readConfigFile(context.env));
  const what = known.includes(envName)
    ? `${envName} has no URL yet`
    : `${envName} is a new environment${didYouMean(envName, known)}`;
  const setUrl = `petinv env set-url ${envName} https://<host>/v1`;
  if (!context.stdin.isTTY)
    throw usageError(`${what}; store its key anyway with --create, or first: ${setUrl}`);
  if (!(await confirm(`petinv: ${what}. Store a key for it anyway?`, context.stdin, context.stderr)))
    throw abortedError(`nothing stored; set its URL first: ${setUrl}`);
}

/**
 * Asks the service, where the key would go once stored, whether it accepts the key: a refused key, or one
 * that cannot be checked, is not stored (`--no-verify` stores it anyway). Returns what to tell the user.
 */
async function verifyKey(flags: GlobalFlags, context: CommandContext, settings: Settings, key: string) {
  const envName = settings.env.value;
  const unchecked = `store it unchecked: petinv login --env ${envName} --no-verify`;
  if (settings.baseUrl.value === undefined)
    return `not checked: ${envName} has no URL yet (petinv env set-url ${envName} <url>)`;
  try {
    // The key as if it were stored for the environment: it goes only where a stored one would.
    const apiKey = { value: key, source: 'config file', origin: 'petinv login' } as const;
    const { client } = await connect(flags, context, { settings: { ...settings, apiKey } });
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
export async function runLogin(flags: LoginFlags, context: CommandContext) {
  const settings = loadSettings(flags, context.env, { allowUnknownEnvironment: true });
  const envName = settings.env.value;
  if (settings.keyBaseUrl === undefined && !flags.create)
    await confirmEnvironmentWithoutUrl(envName, context);
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
    flags.verify === false ? 'not checked (--no-verify)' : await verifyKey(flags, context, settings, trimmed);
  const path = await updateConfigFile((config) => {
    config.environments[envName] = { ...storedEnvironment(config, envName), apiKey: trimmed };
  }, context.env);
  context.stderr.write(
    `petinv: stored the API key ${maskKey(trimmed)} for ${envName} in ${path}; ${checked}\n`,
  );
}
