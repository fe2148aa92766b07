/** The examples each command's help and the man page show, by command path; a test wants some for each. */
export const COMMAND_EXAMPLES: Readonly<Record<string, readonly string[]>> = {
  list: [
    'petinv list                          # a table on a terminal, TSV in a pipe',
    'petinv list --status sold --low 3 --sort quantity',
    "petinv list --json | jq 'map(.quantity) | add'",
    'petinv list --count-sheet > count.csv  # a stock-take: fill in counted',
    'petinv list --watch --status sold    # redrawn every 2 s; JSON lines in a pipe',
  ],
  summary: ['petinv summary --low 3', 'petinv summary --json | jq .units'],
  get: ['petinv get 42                        # one pet, as list shows it', 'petinv get 42 --json'],
  set: [
    'petinv set 42 7',
    'petinv list --count-sheet > count.csv  # fill in the counted column',
    'petinv set --file count.csv --dry-run  # review what would change',
    'petinv set --file count.csv          # pets changed since export: kept (11)',
    "petinv list --json | jq 'map(.quantity = 0)' | petinv set -",
  ],
  history: ['petinv history                       # the newest run first', 'petinv history --json'],
  undo: [
    'petinv undo --dry-run                # what undoing the newest run would write',
    'petinv undo 20261125T180102-3fa9     # a run from petinv history',
  ],
  adjust: [
    'petinv adjust 42 +5                  # 42: 7 → 12',
    'petinv adjust 42 -2 --dry-run        # show the change, write nothing',
  ],
  env: ['petinv env                           # * marks the current environment', 'petinv env --json'],
  'env list': ['petinv env list', "petinv env list --json | jq -r '.[] | select(.current) | .name'"],
  'env set-url': [
    'petinv env set-url staging https://staging.petstore.example.com/v1',
    'petinv env set-url staging https://moved.example/v1 --yes  # key goes along',
  ],
  'env use': ['petinv env use staging'],
  'env remove': ['petinv env remove qa'],
  login: [
    'printf %s "$KEY" | petinv login --env staging',
    'petinv login --env staging     # typed, hidden; checked by the service first',
    'printf %s "$KEY" | petinv login --env qa --create --no-verify',
  ],
  logout: ['petinv logout --env staging'],
  config: ['petinv config', 'petinv --env staging config --json'],
  'config path': ['petinv config path'],
  status: ['petinv status', 'petinv --env staging status --json'],
  serve: [
    'petinv serve                         # then elsewhere: petinv --env local list',
    'petinv serve --port 0 --json         # a free port; the readiness line as JSON',
    'petinv serve --data fixture.json --in-memory --latency 50-200 --fail-rate 0.1',
  ],
  completion: [
    'eval "$(petinv completion bash)"     # in ~/.bashrc; zsh likewise',
    'petinv completion fish | source',
  ],
  help: ['petinv help set', 'petinv help exit-codes', 'petinv help environment'],
};

export function examplesText(path: string): string | undefined {
  const examples = COMMAND_EXAMPLES[path];
  if (!examples) return undefined;
  return `\nExamples:\n${examples.map((example) => `  ${example}`).join('\n')}\n`;
}
