import { displayUrl, maskKey, type Resolved, type Settings } from '../config/settings';
import type { Column } from './exporter';
import { paint } from './inventory';

/**
 * `petinv config` and `petinv status` as rows, for -o table|tsv|csv|ndjson and --fields: one row per
 * setting, its value, and where it came from (`source` the kind, `from` the flag, variable or file).
 */
export interface SettingRow {
  setting: string;
  value: string | number | boolean | null;
  source: string | null;
  from: string | null;
}

export const SETTING_COLUMNS: readonly Column<SettingRow>[] = [
  { key: 'setting', heading: 'SETTING', value: (row) => row.setting },
  { key: 'value', heading: 'VALUE', value: (row) => row.value },
  { key: 'source', heading: 'SOURCE', value: (row) => row.source },
  { key: 'from', heading: 'FROM', value: (row) => row.from },
];

/** A resolved setting as config and status describe it: its shown value, its source and its origin. */
const described = (resolved: Resolved<string | undefined>, show: (value: string) => string) => ({
  value: resolved.value === undefined ? null : show(resolved.value),
  source: resolved.source,
  from: resolved.origin,
});

/** The settings as config and status show them: a URL never with a password in it, the key masked. */
export const describeSettings = (settings: Settings) => ({
  env: described(settings.env, (value) => value),
  baseUrl: described(settings.baseUrl, displayUrl),
  apiKey: described(settings.apiKey, maskKey),
});

/** The three settings as rows (settingRows), then those a command adds. */
export const settingRows = (shown: ReturnType<typeof describeSettings>): SettingRow[] =>
  (['env', 'baseUrl', 'apiKey'] as const).map((setting) => ({ setting, ...shown[setting] }));

/**
 * The settings for a person, one line each (`base URL  https://…  (config file)`): where a value came from
 * is named unless it is the config file, which a line of its own names.
 */
export function settingLines(
  shown: ReturnType<typeof describeSettings>,
  configFile: string,
  options: { color: boolean; width: number; apiKeyNote?: string },
): string {
  const chalk = paint(options.color);
  const line = (name: string, entry: ReturnType<typeof described>, note = '') => {
    const from = entry.from !== entry.source && entry.from !== configFile ? `: ${entry.from}` : '';
    const origin =
      entry.source === 'default' && entry.value === null ? '' : `  ${chalk.dim(`(${entry.source}${from})`)}`;
    return `${name.padEnd(options.width)}${entry.value ?? chalk.dim('(none)')}${origin}${note}\n`;
  };
  return (
    line('env', shown.env) +
    line('base URL', shown.baseUrl) +
    line('API key', shown.apiKey, options.apiKeyNote && `; ${options.apiKeyNote}`)
  );
}
