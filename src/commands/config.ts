import { configFilePath } from '../config/paths';
import { displayUrl, maskKey, type Resolved } from '../config/settings';
import { loadSettings } from '../config/target';
import { chooseOutput, refuseFieldsInJson } from '../output/choose';
import type { CommandContext } from '../output/context';
import { chooseColumns, exportRows, jsonDocument } from '../output/exporter';
import { paint } from '../output/inventory';
import { SETTING_COLUMNS, settingRow } from '../output/settings';
import type { GlobalFlags } from './flags';

/** Shows the settings a command would use and where each came from; the key only masked. */
export function runConfigShow(flags: GlobalFlags, context: CommandContext) {
  const output = chooseOutput(flags, context, context.stdout.isTTY ? 'table' : 'tsv');
  refuseFieldsInJson(output, 'config');
  if (output.explicit && output.format !== 'json') chooseColumns(SETTING_COLUMNS, output.fields);
  const settings = loadSettings(flags, context.env);
  const path = configFilePath(context.env);
  const describe = (
    resolved: Resolved<string | undefined>,
    show: (value: string) => string = (value) => value,
  ) => ({
    value: resolved.value === undefined ? null : show(resolved.value),
    source: resolved.source,
    from: resolved.origin,
  });
  const shown = {
    env: describe(settings.env),
    // A --base-url or PETINV_BASE_URL is shown as given, but never with a password in it.
    baseUrl: describe(settings.baseUrl, displayUrl),
    apiKey: describe(settings.apiKey, maskKey),
    configFile: path,
  };
  if (output.format === 'json') {
    context.stdout.write(jsonDocument(shown, output));
    return;
  }
  if (output.explicit) {
    const rows = [
      settingRow('env', shown.env),
      settingRow('baseUrl', shown.baseUrl),
      settingRow('apiKey', shown.apiKey),
      { setting: 'configFile', value: path, source: null, from: null },
    ];
    context.stdout.write(exportRows(SETTING_COLUMNS, output, rows));
    return;
  }
  const chalk = paint(context.color);
  const line = (name: string, entry: { value: string | null; source: string; from: string }) =>
    `${name.padEnd(9)}${entry.value ?? chalk.dim('(none)')}  ${chalk.dim(entry.source === 'default' && entry.value === null ? '' : `(${entry.source}${entry.from !== entry.source && entry.from !== path ? `: ${entry.from}` : ''})`)}\n`;
  context.stdout.write(
    line('env', shown.env) +
      line('base URL', shown.baseUrl) +
      line('API key', shown.apiKey) +
      `${'file'.padEnd(9)}${path}\n`,
  );
}

export function runConfigPath(context: CommandContext) {
  context.stdout.write(`${configFilePath(context.env)}\n`);
}
