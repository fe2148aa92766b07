import { configFilePath } from '../config/paths';
import { loadSettings } from '../config/target';
import { chooseOutput, refuseFieldsInJson } from '../output/choose';
import type { CommandContext } from '../output/context';
import { chooseColumns, exportRows, jsonDocument } from '../output/exporter';
import { describeSettings, SETTING_COLUMNS, settingLines, settingRows } from '../output/settings';
import type { GlobalFlags } from './flags';

/** Shows the settings a command would use and where each came from; the key only masked. */
export function runConfigShow(flags: GlobalFlags, context: CommandContext) {
  const output = chooseOutput(flags, context);
  refuseFieldsInJson(output, 'config');
  if (output.explicit && output.format !== 'json') chooseColumns(SETTING_COLUMNS, output.fields);
  const shown = describeSettings(loadSettings(flags, context.env));
  const path = configFilePath(context.env);
  if (output.format === 'json') context.stdout.write(jsonDocument({ ...shown, configFile: path }, output));
  else if (output.explicit) {
    const rows = [...settingRows(shown), { setting: 'configFile', value: path, source: null, from: null }];
    context.stdout.write(exportRows(SETTING_COLUMNS, output, rows));
  } else
    context.stdout.write(
      `${settingLines(shown, path, { color: context.color, width: 9 })}${'file'.padEnd(9)}${path}\n`,
    );
}

export function runConfigPath(context: CommandContext) {
  context.stdout.write(`${configFilePath(context.env)}\n`);
}
