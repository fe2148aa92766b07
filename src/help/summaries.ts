/**
 * The program's commands, named once (the launcher reads them without loading the program; build.ts has
 * exactly these), each with its line in the top-level help and completion: one line at 80 columns.
 */
export const COMMAND_SUMMARIES = {
  list: 'the stock of every pet; --watch its changes',
  get: "one pet's stock",
  set: "set one pet's quantity, or many from a file",
  adjust: 'raise or lower a quantity (atomic on serve)',
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
} as const;
