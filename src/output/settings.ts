import type { Column } from './exporter';

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
export interface DescribedSetting {
  value: string | null;
  source: string;
  from: string;
}

export const settingRow = (setting: string, described: DescribedSetting): SettingRow => ({
  setting,
  value: described.value,
  source: described.source,
  from: described.from,
});
