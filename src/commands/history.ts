import { writeNotice } from '../bulk/plan';
import { stateDirectory } from '../config/paths';
import type { Settings } from '../config/settings';
import { loadSettings, noBaseUrlError } from '../config/target';
import { type HistoryRun, linkedStore } from '../history/store';
import { chooseOutput, refuseFieldsInJson } from '../output/choose';
import type { CommandContext } from '../output/context';
import { type Column, exportRows, jsonDocument } from '../output/exporter';
import { plural } from '../output/plural';
import { printable } from '../printable';
import { connect } from './connect';
import type { GlobalFlags } from './flags';
import { historyFor } from './record';

/** A run as JSON: its changes as `{"petId","before","after"}`, petIds exact. */
export const runValue = (run: HistoryRun) => ({
  id: run.id,
  at: run.at,
  env: run.env,
  service: run.service,
  command: run.command,
  pets: run.changes.length,
  marks: run.marks ?? [],
  changes: run.changes.map(({ petId, before, after }) => ({ petId, before, after })),
});

const RUN_COLUMNS: readonly Column<HistoryRun>[] = [
  { key: 'id', heading: 'RUN', value: (run) => run.id },
  { key: 'at', heading: 'WHEN (UTC)', value: (run) => run.at },
  { key: 'env', heading: 'ENV', value: (run) => run.env },
  { key: 'command', heading: 'COMMAND', value: (run) => run.command },
  { key: 'pets', heading: 'PETS', value: (run) => run.changes.length, align: 'right' },
  { key: 'marks', heading: 'MARKS', value: (run) => (run.marks ?? []).join(' ') },
];

/**
 * The store the service says it serves, from the list's first batch (serve says it on a refusal too), or
 * why it was not told. A question, not the command's point: 2 s at most.
 */
async function askStore(flags: GlobalFlags, context: CommandContext, settings: Settings) {
  if (settings.apiKey.value === undefined) return new Error('no API key');
  let said = (): string | undefined => undefined;
  try {
    const timeout = Math.min(flags.timeout, 2000);
    const { client } = await connect({ ...flags, retries: 0, timeout }, context, { settings });
    said = () => client.storeId;
    for await (const _firstBatch of client.streamInventory()) break;
    return client.storeId ?? null;
  } catch (error) {
    return said() ?? (error as Error);
  }
}

/** The recent write runs against the environment's service, newest first; with --json, with their changes. */
export async function runHistory(flags: GlobalFlags, context: CommandContext): Promise<void> {
  const output = chooseOutput(flags, context);
  refuseFieldsInJson(output, 'history');
  // The chosen environment's history is meant; no key is needed to read it.
  const settings = loadSettings(flags, context.env);
  const baseUrl = settings.baseUrl.value;
  if (baseUrl === undefined) throw noBaseUrlError(settings.env.value, context.env, ', so no history to show');
  // Asked each time: another data file may be served at the address since. Unanswered, the store last seen there.
  const asked = await askStore(flags, context, settings);
  const storeId = asked instanceof Error ? linkedStore(stateDirectory(context.env), baseUrl) : asked;
  if (asked instanceof Error && storeId !== undefined)
    writeNotice(
      `${baseUrl} did not say which store it serves (${printable(asked.message, 120)}): these are the runs of the one it served when last asked`,
      context,
    );
  const history = historyFor(baseUrl, context, storeId);
  const runs = history.read().reverse();
  if (output.format === 'json') {
    context.stdout.write(jsonDocument(runs.map(runValue), output));
    return;
  }
  if (runs.length === 0 && !output.explicit && context.stdout.isTTY) {
    context.stderr.write(`petinv: no write runs recorded for ${baseUrl} yet (${history.file})\n`);
    return;
  }
  const footer = (rows: readonly HistoryRun[]) =>
    `${plural(rows.length, 'run')} · ${baseUrl} · petinv undo RUN takes one back`;
  context.stdout.write(exportRows(RUN_COLUMNS, { ...output, footer }, runs));
}
