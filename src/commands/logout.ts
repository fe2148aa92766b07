import { updateConfigFile } from '../config/file';
import { storedEnvironment } from '../config/settings';
import { loadSettings } from '../config/target';
import type { CommandContext } from '../output/context';
import type { GlobalFlags } from './flags';

/** Forgets the API key stored for one environment; its URL stays. */
export async function runLogout(flags: GlobalFlags, context: CommandContext) {
  const envName = loadSettings(flags, context.env).env.value;
  let had = false;
  const path = await updateConfigFile((config) => {
    const stored = storedEnvironment(config, envName);
    had = stored?.apiKey !== undefined;
    if (stored) delete stored.apiKey;
  }, context.env);
  context.stderr.write(
    had
      ? `petinv: removed the API key for ${envName} from ${path}\n`
      : `petinv: no API key was stored for ${envName}\n`,
  );
}
