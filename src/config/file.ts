import { chmodSync, mkdirSync, readFileSync } from 'node:fs';
import * as z from 'zod/mini';
import { describeIssues } from '../api/schemas';
import { configError } from '../errors';
import { configDirectory, configFilePath } from './paths';

const Environment = z.strictObject({
  baseUrl: z.optional(z.url({ protocol: /^https?$/, error: 'must be an http or https URL' })),
  apiKey: z.optional(z.string().check(z.minLength(1))),
});

export const ConfigFile = z.strictObject({
  currentEnv: z.optional(z.string().check(z.minLength(1))),
  environments: z._default(z.record(z.string().check(z.minLength(1)), Environment), {}),
});
export type ConfigFile = z.output<typeof ConfigFile>;

/**
 * Reads and validates the config file; an absent file is an empty config. Reading does not go
 * through conf: conf loads ajv (about 140 ms), and every command reads the file, while only a few write it.
 */
export function readConfigFile(env: NodeJS.ProcessEnv = process.env): ConfigFile {
  const path = configFilePath(env);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { environments: {} };
    throw configError(`cannot read config file ${path}: ${(error as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = text.trim() === '' ? {} : JSON.parse(text);
  } catch (error) {
    throw configError(
      `config file ${path} is not valid JSON (${(error as Error).message}); fix or delete it`,
    );
  }
  const parsed = ConfigFile.safeParse(raw);
  if (!parsed.success)
    throw configError(`config file ${path} is invalid: ${describeIssues(parsed.error)}; fix or delete it`);
  return parsed.data;
}

/** Writes the whole config atomically through conf, readable by its owner alone. */
export async function writeConfigFile(
  config: ConfigFile,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string> {
  const directory = configDirectory(env);
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  chmodSync(directory, 0o700);
  const { default: Conf } = await import('conf');
  const store = new Conf<ConfigFile>({
    projectName: 'petinv',
    cwd: directory,
    configName: 'config',
    configFileMode: 0o600,
    // petinv validates with its own zod schema above; conf must not wipe a file it cannot read.
    clearInvalidConfig: false,
  });
  store.store = ConfigFile.parse(config);
  chmodSync(store.path, 0o600);
  return store.path;
}

/** Applies a change to the stored config: read, validate, change, write. */
export async function updateConfigFile(
  change: (config: ConfigFile) => void,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string> {
  const config = readConfigFile(env);
  change(config);
  return writeConfigFile(config, env);
}
