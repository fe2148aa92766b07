import type { GlobalFlags } from '../commands/flags';
import type { LoginFlags } from '../commands/login';
import type { ChosenCommand, CommandTable, FlagsMatch, OptionsOf, Program } from './global-options';

/** The commands that keep the settings: environments, keys and what is in effect. */

const globals = (command: ChosenCommand) => command.optsWithGlobals();

export const SETTINGS_COMMANDS = {
  env: (program, context) => {
    const list = async (_flags: object, command: ChosenCommand) =>
      (await import('../commands/env')).runEnvList(globals(command), context(command));
    const env = program
      .command('env')
      .description('list environments and mark the current one; set-url, use, remove')
      .action(list);
    // `petinv env list` as gh and kubectl users type it (the top-level help names list beside set-url).
    env
      .command('list')
      .description('list environments and mark the current one (as petinv env does)')
      .action(list);
    env
      .command('set-url')
      .argument('<env>')
      .argument('<url>', 'base URL ending in /v1')
      .description('set the base URL of an environment, adding it if new')
      .option('-y, --yes', 'move an environment whose API key is stored to another origin without asking')
      .action(async (name, url, flags, command) =>
        (await import('../commands/env')).runEnvSetUrl(name, url, { yes: flags.yes }, context(command)),
      );
    env
      .command('use')
      .argument('<env>')
      .description('make an environment the current one')
      .action(async (name, _flags, command) =>
        (await import('../commands/env')).runEnvUse(name, context(command)),
      );
    env
      .command('remove')
      .argument('<env>')
      .description('forget the URL and key stored for an environment')
      .action(async (name, _flags, command) =>
        (await import('../commands/env')).runEnvRemove(name, context(command)),
      );
  },
  login: (program, context) =>
    program
      .command('login')
      .description('store the API key of an environment: typed hidden on a terminal, or piped on stdin')
      .option('--create', 'store the key even if the environment has no URL yet (a script is not asked)')
      .option('--no-verify', 'store the key without asking the service whether it accepts it')
      .action(async (_flags, command) =>
        (await import('../commands/login')).runLogin(command.optsWithGlobals(), context(command)),
      ),
  logout: (program, context) =>
    program
      .command('logout')
      .description('forget the API key of an environment')
      .action(async (_flags, command) =>
        (await import('../commands/logout')).runLogout(globals(command), context(command)),
      ),
  config: (program, context) =>
    program
      .command('config')
      .description('show the settings in effect and where each came from (key masked)')
      .action(async (_flags, command) =>
        (await import('../commands/config')).runConfigShow(globals(command), context(command)),
      )
      .command('path')
      .description("print the config file's path")
      .action(async (_flags, command) =>
        (await import('../commands/config')).runConfigPath(context(command)),
      ),
  status: (program, context) =>
    program
      .command('status')
      .description(
        'the environment in use, its URL and key and where each came from, and whether the service answers with that key',
      )
      .action(async (_flags, command) =>
        (await import('../commands/status')).runStatus(globals(command), context(command)),
      ),
} satisfies Partial<CommandTable>;

/** Each command reads exactly the flags declared above (see FlagsMatch). */
export const SETTINGS_FLAGS_MATCH: [
  FlagsMatch<GlobalFlags, OptionsOf<Program>>,
  FlagsMatch<LoginFlags, OptionsOf<ReturnType<(typeof SETTINGS_COMMANDS)['login']>>>,
] = [true, true];
