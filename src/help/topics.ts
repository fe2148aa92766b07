/**
 * The help topics, the one source of these texts for the terminal, docs/ and the man page (manual.ts).
 * Text between backticks is code: plain on a terminal, `code` in the docs, bold in the man page.
 */

import { INPUT_TOPIC } from './sheets';

export type HelpBlock =
  | { paragraph: string }
  | { table: { head: readonly string[]; rows: readonly (readonly string[])[] } }
  | { code: readonly string[] };

export interface HelpTopic {
  name: string;
  /** One line for the list of topics. */
  summary: string;
  manSection: string;
  blocks: readonly HelpBlock[];
}

const exitCodes: HelpTopic = {
  name: 'exit-codes',
  summary: 'what each exit status means',
  manSection: 'EXIT STATUS',
  blocks: [
    {
      table: {
        head: ['exit code', 'meaning'],
        rows: [
          ['0', 'success'],
          ['1', 'unexpected internal error (please report it; `PETINV_DEBUG=1` shows the stack)'],
          ['2', 'usage: a bad argument or option; nothing was sent'],
          [
            '3',
            'configuration: missing or refused URL (from a variable or the config file), key or proxy; bad config or data file; redirect; port in use',
          ],
          [
            '3',
            'serve: a file system that refuses at start or stop (read-only, missing, no space), or a damaged data file or journal (see --recover)',
          ],
          ['4', 'authentication: the service answered 401 or 403'],
          ['5', 'not found: the service answered 404 (no such pet, or a wrong base URL)'],
          ['6', 'rejected by the service: 400 and other 4xx'],
          [
            '7',
            'network: the service or the proxy could not be reached, or its TLS certificate cannot be trusted',
          ],
          [
            '8',
            'server error (5xx after retries), a timeout, an answer too large, cut off, or one that breaks the contract (a list naming a pet twice); a write whose outcome is unknown (sent, then the connection broke: it may have been applied)',
          ],
          [
            '9',
            'a bulk run partly failed: some updates failed or some input was skipped (an update that may have been applied is 8, a mismatch 12, before 9)',
          ],
          [
            '10',
            'aborted: a production change was not confirmed, or an `env set-url` that would send a stored key to another origin; serve cut off by a second signal',
          ],
          [
            '11',
            'conflict: a bulk run or an undo kept a pet someone changed since the input was read (its `from` no longer matches); the rest was applied; `--force` writes anyway',
          ],
          [
            '12',
            'mismatch: the service answered a write (set, adjust, a bulk run) with another quantity than the one sent',
          ],
          [
            '130',
            'interrupted: Ctrl-C (at the login prompt too; serve after its clean stop), as a shell reports a command SIGINT stopped',
          ],
          [
            '141',
            'stdout or stderr was closed by its reader (`petinv list | head -1`): the status of SIGPIPE',
          ],
        ],
      },
    },
    {
      paragraph:
        'With `--json`, stdout holds only data and every failure is one line `{"error":{"code","message","status","exitCode"}}` on stderr; `status` is `null` when no HTTP answer has one.',
    },
  ],
};

const environment: HelpTopic = {
  name: 'environment',
  summary: 'the environment variables petinv reads',
  manSection: 'ENVIRONMENT',
  blocks: [
    {
      paragraph:
        'Precedence, decided in one place: flag > environment variable > config file > default. `petinv config` shows which one won for each setting. A variable set to an empty value counts as unset; a flag given an empty value is a usage error (exit 2), so `--env "$TARGET"` with TARGET unset never falls back to another environment.',
    },
    {
      table: {
        head: ['variable', 'meaning'],
        rows: [
          ['`PETINV_ENV`', 'environment to use (like `--env`)'],
          ['`PETINV_BASE_URL`', 'base URL (like `--base-url`)'],
          ['`PETINV_API_KEY`', 'API key; the only way besides the config file, as there is no flag for it'],
          ['`PETINV_CONFIG_DIR`', 'directory of `config.json` (default: `$XDG_CONFIG_HOME/petinv` on Linux)'],
          ['`PETINV_DATA_DIR`', "directory of `petinv serve`'s default data file"],
          [
            '`PETINV_CACHE_DIR`',
            'directory of the kept lists and compiled code (default: `$XDG_CACHE_HOME/petinv` on Linux)',
          ],
          ['`PETINV_SERVE_API_KEY`', 'the key `petinv serve` accepts when no `--api-key(-file)` is given'],
          [
            '`XDG_RUNTIME_DIR`, `XDG_STATE_HOME`',
            'where running serves leave their records for `local` (see `petinv serve`); `$XDG_STATE_HOME/petinv/history` (else `~/.local/state/petinv/history`) holds the history of write runs (`petinv history`, `petinv undo`)',
          ],
          [
            '`HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`',
            'proxies for requests to the service (lower case too); a loopback service never uses one',
          ],
          [
            '`NO_COLOR`, `FORCE_COLOR`',
            'colour: `NO_COLOR` (any non-empty value) turns it off, `FORCE_COLOR=1` on in a pipe',
          ],
          [
            '`PETINV_DEBUG`',
            'print the stack of an unexpected error; `http` traces like `-v`, `http,body` like `-vv`',
          ],
          ['`PETINV_MAX_BODY_SIZE`', 'largest answer petinv reads (like `--max-body-size`)'],
          ['`PETINV_MAX_RETRY_WAIT`', 'most seconds of waiting between retries (like `--max-retry-wait`)'],
          ['`NODE_EXTRA_CA_CERTS`', "a PEM file of a private certificate authority to trust (Node's own)"],
        ],
      },
    },
  ],
};

const formats: HelpTopic = {
  name: 'formats',
  summary: 'what petinv prints, for scripts',
  manSection: 'FORMATS',
  blocks: [
    {
      paragraph:
        'Data goes to stdout, everything else (progress, summaries, errors) to stderr. On a terminal petinv prints for people; in a pipe, tab-separated lines a script can cut; with `--json`, JSON. petIds are int64 and exact in every format.',
    },
    {
      table: {
        head: ['command', 'in a pipe', 'with --json'],
        rows: [
          [
            '`list`',
            '`petId<TAB>status<TAB>quantity` (`--csv`: with a header line; `--ndjson`: an item a line)',
            'one array of items',
          ],
          ['`get ID`, `set ID N`', '`petId<TAB>status<TAB>quantity`', 'the item'],
          ['`adjust ID D`', '`petId<TAB>before<TAB>after`', '`{"petId","from","to","item"}`'],
          [
            '`env`',
            '`marker<TAB>name<TAB>base URL<TAB>key`, `*` the current',
            '`[{"name","current","baseUrl","hasKey"}]`',
          ],
          ['`config`, `status`, `summary`', 'the report a person reads', 'one object'],
          [
            '`--dry-run`',
            '`42: 12 → 7`, a line per change',
            '`{"petId","from","to","found"}` (an array for bulk)',
          ],
          [
            '`set --file F`, `undo`',
            'a summary on stderr; `--ndjson`: a result a line',
            'an array of results; the summary on stderr',
          ],
          ['`history`', '`id<TAB>at<TAB>env<TAB>command<TAB>pets<TAB>marks`', 'runs with their `changes`'],
        ],
      },
    },
    {
      paragraph:
        'An item is `{"petId":42,"quantity":7,"status":"sold"}`; a bulk result `{"input":3,"ok":true,"item":{…}}` or `{"input":4,"ok":false,"petId":43,"quantity":-1,"error":{…}}` (`"maybeApplied":true` when sent, outcome unknown), `input` being its line or its place in a JSON array.',
    },
    {
      paragraph:
        'Rows in any format (`-o`, `--fields`): `petinv help rows`. What bulk runs read: `petinv help input`. Failures, and their one JSON line: `petinv help exit-codes`.',
    },
  ],
};

const rows: HelpTopic = {
  name: 'rows',
  summary: 'data as rows: -o, --fields, --no-headers',
  manSection: 'ROWS',
  blocks: [
    {
      paragraph:
        '`-o table|tsv|csv|ndjson`, `--fields` and `--no-headers` work on every command that prints data, as rows: `list` and `set` an item a row; `env` an environment a row (`current,name,baseUrl,hasKey`); `config` and `status` a setting a row (`setting,value,source,from`; status adds `keyStored`, any `ignoredServeRecord`, `configFile`, and `service` with `ok` or the error code); `summary` a status a row (`status,pets,units`); `adjust` `petId,from,to` (`item` in JSON only); a dry run `petId,from,to,found`; a bulk run a result a row as each completes (`input,result,petId,quantity,status,error,message`, `result` being `updated`, `failed`, `maybe applied` (sent, outcome unknown), `not sent` or `conflict`; skipped lines stay on stderr). Without any of them a command prints its own view: the reports of `config`, `status` and `summary`, `42: 7 → 12` for `adjust` on a terminal and for a dry run, nothing but the summary for a bulk run.',
    },
    {
      paragraph:
        '`--fields` is a usage error (exit 2, before anything is sent) where the JSON has a shape of its own: the one object of `config`, `status` and `summary`, and the JSON and NDJSON of dry runs and bulk results. `--json` is `-o json` everywhere, and `set --ndjson` is `-o ndjson`.',
    },
  ],
};

export const HELP_TOPICS: readonly HelpTopic[] = [exitCodes, environment, formats, rows, INPUT_TOPIC];

/** `petinv help options`, whose text is made from the declarations (src/help/options.ts). */
export const OPTIONS_TOPIC = { name: 'options', summary: 'the options every command takes' } as const;

/** Every topic `petinv help NAME` knows, with its one line, in the order help lists them. */
export const HELP_TOPIC_NAMES: readonly (readonly [string, string])[] = [
  [OPTIONS_TOPIC.name, OPTIONS_TOPIC.summary],
  ...HELP_TOPICS.map((topic) => [topic.name, topic.summary] as const),
];

export function findTopic(name: string): HelpTopic | undefined {
  return HELP_TOPICS.find((topic) => topic.name === name);
}
