/**
 * The one line each command has in the top-level help's list (commander's `summary`), by command name:
 * short enough that `petinv --help` gives each command a single line at 80 columns, where the command's
 * own help keeps its longer description. Completion shows the same line. test/cli/help.test.ts fails when
 * a command's line in the top-level help wraps at 80 columns.
 */
export const COMMAND_SUMMARIES: Readonly<Record<string, string>> = {
  list: 'the stock of every pet; --watch its changes',
  get: "one pet's stock",
  set: "set one pet's quantity, or many from a file",
  adjust: 'add to or take from a quantity (not atomic)',
  summary: 'pets and units per status, and the low pets',
  history: 'the recent write runs against this service',
  undo: 'take back a write run (changed pets kept)',
  env: 'the environments: list, set-url, use, remove',
  login: "store an environment's API key",
  logout: "forget an environment's API key",
  config: 'the settings in effect, and their sources',
  status: 'settings, and whether the service answers',
  serve: 'run the inventory service on this machine',
  completion: 'print a shell completion script',
  help: 'help for a command, or a help topic',
};
