import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readConfigFile, updateConfigFile } from '../config/file';
import { configFilePath } from '../config/paths';
import { UNSENDABLE_KEY_CHARACTER } from '../config/settings';
import { configError, usageError } from '../errors';

export type ResolvedKeys = { keys: string[]; source: string; generated?: string };

/** Why no client could send this key, or undefined when one can; the key itself is never repeated. */
function unsendable(key: string): string | undefined {
  if (key === '') return 'a key is empty';
  if (UNSENDABLE_KEY_CHARACTER.test(key))
    return 'a key holds white space, a control character or a non-ASCII character, which no client can send';
  return undefined;
}

function checkKey(key: string, where: string) {
  const problem = unsendable(key);
  if (problem) throw usageError(`${where}: ${problem}`);
}

/** A key file larger than this is not a key file (and /dev/zero must not hang the start). */
const KEY_FILE_LIMIT = 1024 * 1024;

/** Keys one per line; blank lines (and so a trailing newline) are skipped, and a CR before a LF too. */
async function readKeyFile(path: string): Promise<string[]> {
  const chunks: Buffer[] = [];
  try {
    // One byte past the limit at most: a file that large is refused, and /dev/zero ends there too.
    for await (const chunk of createReadStream(path, { end: KEY_FILE_LIMIT })) chunks.push(chunk);
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    throw configError(`cannot read --api-key-file ${path} (${code ?? (error as Error).message})`);
  }
  const bytes = Buffer.concat(chunks);
  if (bytes.length > KEY_FILE_LIMIT) throw usageError(`--api-key-file ${path}: larger than 1 MiB`);
  const keys: string[] = [];
  for (const [index, raw] of bytes.toString('utf8').split('\n').entries()) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '') continue;
    checkKey(line, `--api-key-file ${path}, line ${index + 1}`);
    keys.push(line);
  }
  if (keys.length === 0) throw usageError(`--api-key-file ${path} holds no key`);
  return keys;
}

export type ServeKeyFlags = { apiKey?: string[]; apiKeyFile?: string };

/**
 * --api-key and --api-key-file together, else PETINV_SERVE_API_KEY, else the key stored for `local`,
 * else a new one stored there. A key no client could send is refused before anything starts.
 */
export async function resolveServeKeys(flags: ServeKeyFlags, env: NodeJS.ProcessEnv): Promise<ResolvedKeys> {
  const fromFlag = flags.apiKey ?? [];
  for (const key of fromFlag) checkKey(key, '--api-key');
  if (flags.apiKeyFile !== undefined) {
    const fromFile = await readKeyFile(flags.apiKeyFile);
    const source = `--api-key-file ${flags.apiKeyFile}`;
    return {
      keys: [...fromFlag, ...fromFile],
      source: fromFlag.length > 0 ? `--api-key and ${source}` : source,
    };
  }
  if (fromFlag.length > 0) return { keys: fromFlag, source: '--api-key' };
  const fromEnv = env.PETINV_SERVE_API_KEY;
  if (fromEnv !== undefined) {
    checkKey(fromEnv, 'PETINV_SERVE_API_KEY');
    return { keys: [fromEnv], source: 'PETINV_SERVE_API_KEY' };
  }
  const stored = readConfigFile(env).environments.local?.apiKey;
  if (stored) {
    const problem = unsendable(stored);
    if (problem)
      throw configError(
        `the local environment's key in ${configFilePath(env)} cannot be used: ${problem}; store another with petinv login --env local`,
      );
    return { keys: [stored], source: `the local environment's key in ${configFilePath(env)}` };
  }
  const generated = `pk_${randomBytes(24).toString('base64url')}`;
  const path = await updateConfigFile((config) => {
    config.environments.local = { ...config.environments.local, apiKey: generated };
  }, env);
  return { keys: [generated], source: `generated, stored for the local environment in ${path}`, generated };
}
