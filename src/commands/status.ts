import { performance } from 'node:perf_hooks';
import { TransportError } from '../client/transport';
import { readConfigFile } from '../config/file';
import { configFilePath } from '../config/paths';
import { findRunningServe } from '../config/serve-records';
import { type Settings, storedEnvironment } from '../config/settings';
import { loadSettings } from '../config/target';
import { PetinvError, type ServiceErrorBody } from '../errors';
import { chooseOutput, refuseFieldsInJson } from '../output/choose';
import type { CommandContext } from '../output/context';
import { chooseColumns, exportRows, jsonDocument } from '../output/exporter';
import { paint } from '../output/inventory';
import { plural } from '../output/plural';
import {
  describeSettings,
  SETTING_COLUMNS,
  type SettingRow,
  settingLines,
  settingRows,
} from '../output/settings';
import { connect } from './connect';
import type { GlobalFlags } from './flags';

type Answer = { ok: true; ms: number; pets: number } | { ok: false; error: ServiceErrorBody };

/** Asks the service for the inventory with the settings in effect: whether it answers, and how fast. */
async function askService(
  flags: GlobalFlags,
  context: CommandContext,
  settings: Settings,
): Promise<{ answer: Answer; failure?: PetinvError }> {
  try {
    const { client } = await connect(flags, context, { settings });
    // The spec has no lighter request that proves the key: the list is the one read it offers.
    const started = performance.now();
    const items = await client.listInventory();
    const ms = Math.round((performance.now() - started) * 10) / 10;
    return { answer: { ok: true, ms, pets: items.length } };
  } catch (error) {
    if (!(error instanceof PetinvError)) throw error;
    return { answer: { ok: false, error: error.body }, failure: error };
  }
}

type Text = string | null;
function row(setting: string, value: SettingRow['value'], source: Text = null, from: Text = null) {
  return { setting, value, source, from };
}

/**
 * What a failed check says of the service: only a refusal of the key is about the key; a connection that
 * broke once the request was sent reached the service (the error below says so too); a timeout is no answer.
 */
function failureVerdict(failure: PetinvError | undefined): string {
  if (failure?.kind === 'auth') return 'refuses this key';
  if (failure?.body.code === 'timeout') return 'does not answer in time';
  if (failure?.kind === 'network') {
    const { cause } = failure;
    const reached = cause instanceof TransportError && !cause.unreachable && (cause.sent || cause.brokeOff);
    return reached ? 'was reached, but the connection broke before an answer' : 'cannot be reached';
  }
  return 'answers, but not with the inventory';
}

/**
 * The environment in use, its URL and key and where each came from, and whether the service answers with
 * that key: the report on stdout whatever the answer, a failure then on stderr with its exit code.
 */
export async function runStatus(flags: GlobalFlags, context: CommandContext) {
  const output = chooseOutput(flags, context);
  refuseFieldsInJson(output, 'status');
  if (output.explicit && output.format !== 'json') chooseColumns(SETTING_COLUMNS, output.fields);
  const settings = loadSettings(flags, context.env);
  const envName = settings.env.value;
  const configFile = configFilePath(context.env);
  const stored = storedEnvironment(readConfigFile(context.env), envName)?.apiKey !== undefined;
  const ignored = envName === 'local' ? findRunningServe(context.env).ignored : [];
  const { answer, failure } = await askService(flags, context, settings);

  const shown = describeSettings(settings);
  const report = {
    ...shown,
    apiKey: { ...shown.apiKey, stored },
    serve: settings.serve ? { description: settings.serve.description } : null,
    ignoredServeRecords: ignored,
    configFile,
    service: answer,
  };

  if (output.format === 'json') context.stdout.write(jsonDocument(report, output));
  else if (output.explicit) {
    // The settings as config has them, then whether a key is stored, each serve record ignored, the config
    // file, and the service's answer (`ok`, or its error code, with the figures or the message in `from`).
    const rows = [
      ...settingRows(shown),
      row('keyStored', stored, 'config file', configFile),
      ...ignored.map((reason) => row('ignoredServeRecord', reason)),
      row('configFile', configFile),
      answer.ok
        ? row('service', 'ok', 'service', `${answer.pets} pets in ${answer.ms} ms`)
        : row(
            'service',
            answer.error.code,
            answer.error.status === null ? null : `HTTP ${answer.error.status}`,
            answer.error.message,
          ),
    ];
    context.stdout.write(exportRows(SETTING_COLUMNS, output, rows));
  } else {
    const chalk = paint(context.color);
    const row = (name: string, text: string) => `${name.padEnd(10)}${text}\n`;
    const storedText = stored ? `a key is stored for ${envName}` : `no key is stored for ${envName}`;
    const verdict = answer.ok
      ? chalk.green(`answers with this key: ${plural(answer.pets, 'pet')} in ${answer.ms} ms`)
      : chalk.red(
          failure?.kind === 'config' || failure?.kind === 'usage'
            ? 'not asked: see the reason below'
            : `${failureVerdict(failure)} (${answer.error.code}${answer.error.status ? `, HTTP ${answer.error.status}` : ''})`,
        );
    context.stdout.write(
      settingLines(shown, configFile, { color: context.color, width: 10, apiKeyNote: storedText }) +
        ignored.map((reason) => row('ignored', `serve record: ${reason}`)).join('') +
        row('file', configFile) +
        row('service', verdict),
    );
  }
  if (failure) throw failure;
}
