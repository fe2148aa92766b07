import Table from 'cli-table3';
import { type ConfigFile, readConfigFile, updateConfigFile } from '../config/file';
import { configFilePath } from '../config/paths';
import { findServeForLocal } from '../config/serve-records';
import {
  BUILTIN_ENVIRONMENTS,
  builtinBaseUrl,
  checkBaseUrl,
  environmentNameProblem,
  knownEnvironments,
  resolveSettings,
  storedEnvironment,
} from '../config/settings';
import { abortedError, usageError } from '../errors';
import { tryOr } from '../files/file-system';
import { chooseOutput } from '../output/choose';
import type { CommandContext } from '../output/context';
import { type Column, chooseColumns, exportRows } from '../output/exporter';
import { paint } from '../output/inventory';
import { confirm } from '../output/prompt';
import { printable } from '../printable';
import { didYouMean, shellWord } from '../suggest';
import type { GlobalFlags } from './flags';

function checkEnvName(name: string): string {
  const problem = environmentNameProblem(name);
  if (problem) throw usageError(`"${printable(name, 60)}" ${problem}`);
  return name;
}

type EnvRow = { name: string; current: boolean; baseUrl: string | null; hasKey: boolean };

/** In the table's order, the current marker in a column of its own (`*` or empty) in the text formats. */
const ENV_COLUMNS: readonly Column<EnvRow>[] = [
  { key: 'current', heading: '', value: (row) => row.current, text: (row) => (row.current ? '*' : '') },
  { key: 'name', heading: 'ENVIRONMENT', value: (row) => row.name },
  { key: 'baseUrl', heading: 'BASE URL', value: (row) => row.baseUrl },
  {
    key: 'hasKey',
    heading: 'API KEY',
    value: (row) => row.hasKey,
    text: (row) => (row.hasKey ? 'key' : 'no key'),
  },
];
/** JSON's field order, as it has always been: `[{"name","current","baseUrl","hasKey"}]`. */
const ENV_JSON_FIELDS = ['name', 'current', 'baseUrl', 'hasKey'];

export function runEnvList(flags: GlobalFlags, context: CommandContext) {
  const output = chooseOutput(flags, context);
  const json = output.format === 'json' || output.format === 'ndjson';
  const fields = output.fields ?? (json ? ENV_JSON_FIELDS : undefined);
  const columns = chooseColumns(ENV_COLUMNS, fields, output.format);
  const file = readConfigFile(context.env);
  const path = configFilePath(context.env);
  const settings = resolveSettings(flags, context.env, file, path);
  // `local` without a URL of its own points at the running serve, as every command that uses it does.
  const findServe = () => findServeForLocal(context.env);
  const rows: EnvRow[] = knownEnvironments(file).map((name) => {
    // What is stored for each environment; PETINV_BASE_URL and PETINV_API_KEY override only the one in use.
    const resolved = resolveSettings({ env: name }, {}, file, path, { findServe });
    return {
      name,
      current: name === settings.env.value,
      baseUrl: resolved.baseUrl.value ?? null,
      hasKey: resolved.apiKey.value !== undefined,
    };
  });
  if (output.format !== 'table') {
    context.stdout.write(exportRows(ENV_COLUMNS, { ...output, fields }, rows));
    return;
  }
  const chalk = paint(context.color);
  // cli-table3 for a handful of rows, with a hint where something is missing.
  const cell: Record<string, (row: EnvRow) => string> = {
    current: (row) => (row.current ? chalk.green('*') : ''),
    name: (row) => (row.current ? chalk.bold(row.name) : row.name),
    baseUrl: (row) => row.baseUrl ?? chalk.dim('not set'),
    hasKey: (row) => (row.hasKey ? 'set' : chalk.dim('none')),
  };
  const table = new Table({
    head: output.headers ? columns.map((column) => column.heading) : [],
    chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' },
    style: { head: context.color ? ['bold'] : [], border: context.color ? ['grey'] : [] },
  });
  // The hints go below the table, once: in every row they made it wider than an 80-column terminal.
  for (const row of rows)
    table.push(columns.map((column) => (cell[column.key] as (row: EnvRow) => string)(row)));
  context.stdout.write(`${table.toString()}\n`);
  if (!output.headers) return;
  context.stdout.write(`${chalk.dim(`current: ${settings.env.value} (from ${settings.env.origin})`)}\n`);
  if (rows.some((row) => row.baseUrl === null))
    context.stdout.write(`${chalk.dim('set a base URL: petinv env set-url NAME https://<host>/v1')}\n`);
  if (rows.some((row) => !row.hasKey))
    context.stdout.write(`${chalk.dim('store a key: petinv login --env NAME')}\n`);
}

export async function runEnvUse(name: string, context: CommandContext) {
  checkEnvName(name);
  // Checked on the file as read under the lock, so a concurrent `env remove` cannot slip in between.
  await updateConfigFile((config) => {
    if (!(BUILTIN_ENVIRONMENTS as readonly string[]).includes(name) && !storedEnvironment(config, name))
      throw usageError(
        `unknown environment ${name}${didYouMean(name, knownEnvironments(config))}; add it first: petinv env set-url ${name} https://<host>/v1`,
      );
    config.currentEnv = name;
  }, context.env);
  context.stderr.write(`petinv: now using ${name}\n`);
}

/**
 * Sets an environment's base URL. A stored key goes wherever it points: moving it to another origin warns
 * and asks on a terminal, or is refused without one, unless --yes (issue 21).
 */
export async function runEnvSetUrl(
  name: string,
  url: string,
  flags: { yes?: boolean },
  context: CommandContext,
) {
  checkEnvName(name);
  const baseUrl = checkBaseUrl(url, `petinv env set-url ${name}`, 'usage');
  const keyHome = (config: ConfigFile) => {
    const stored = storedEnvironment(config, name);
    if (stored?.apiKey === undefined) return undefined;
    const home = stored.baseUrl ?? builtinBaseUrl(name);
    const origin = home === undefined ? undefined : new URL(home).origin;
    return origin === new URL(baseUrl).origin ? undefined : origin;
  };
  // A config file petinv cannot read: the update below says why, under its lock.
  const home = tryOr(() => keyHome(readConfigFile(context.env)), undefined);
  if (home !== undefined) await confirmKeyMove(name, home, baseUrl, flags, context);
  await updateConfigFile((config) => {
    // Checked again under the lock: a key stored since (by a login in between) is not moved unasked.
    const now = keyHome(config);
    if (now !== undefined && now !== home && !flags.yes)
      throw abortedError(
        `nothing changed: a key for ${name} (at ${now}) was stored while petinv asked; run it again`,
      );
    config.environments[name] = { ...storedEnvironment(config, name), baseUrl };
  }, context.env);
  context.stderr.write(`petinv: ${name} is at ${baseUrl}\n`);
}

async function confirmKeyMove(
  name: string,
  home: string,
  baseUrl: string,
  flags: { yes?: boolean },
  context: CommandContext,
) {
  const target = new URL(baseUrl).origin;
  const warning = `the API key stored for ${name} belongs to ${home}; with ${name} at ${target}, petinv will send that key to ${target}`;
  const forget = `petinv logout --env ${name}`;
  if (!flags.yes && !context.stdin.isTTY)
    throw abortedError(
      `nothing changed: ${warning}; to move it with its key, run: petinv env set-url ${name} ${shellWord(baseUrl)} --yes; or forget the key first: ${forget}`,
    );
  context.stderr.write(`petinv: warning: ${warning}\n`);
  if (flags.yes) return;
  const question = `Send the key stored for ${name} to ${target} from now on?`;
  if (!(await confirm(question, context.stdin, context.stderr)))
    throw abortedError(
      `nothing changed: ${name} stays at ${home}; to move it without its key, forget the key first: ${forget}`,
    );
}

export async function runEnvRemove(name: string, context: CommandContext) {
  checkEnvName(name);
  await updateConfigFile((config) => {
    if (!storedEnvironment(config, name))
      throw usageError(
        `nothing stored for environment ${name}${didYouMean(name, Object.keys(config.environments))}`,
      );
    delete config.environments[name];
    if (config.currentEnv === name) delete config.currentEnv;
  }, context.env);
  context.stderr.write(`petinv: removed the URL and key stored for ${name}\n`);
}
