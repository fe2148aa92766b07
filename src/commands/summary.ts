import { chooseOutput, refuseFieldsInJson } from '../output/choose';
import type { CommandContext } from '../output/context';
import { chooseColumns, exportRows, jsonDocument } from '../output/exporter';
import {
  renderSummary,
  SUMMARY_COLUMNS,
  summarizeInventory,
  summaryFooter,
  summaryRows,
  summaryValue,
} from '../output/summary';
import { connect } from './connect';
import type { GlobalFlags } from './flags';

/** summary's flags (declared for commander in src/program/inventory.ts). */
export type SummaryFlags = GlobalFlags & { low: number; top: number };

/**
 * Pets and units per status, low stock and the largest stocks, in one pass over the list: the chart (or
 * its lines in a pipe), one JSON object, or with -o, --fields or --no-headers a row per status.
 */
export async function runSummary(flags: SummaryFlags, context: CommandContext): Promise<void> {
  const output = chooseOutput(flags, context);
  refuseFieldsInJson(output, 'summary');
  if (output.explicit) chooseColumns(SUMMARY_COLUMNS, output.fields);
  const { client, envName, where, words } = await connect(flags, context);
  const summary = summarizeInventory(await client.listInventory(), flags.low, flags.top);
  const { stdout } = context;
  if (output.format === 'json') stdout.write(jsonDocument(summaryValue(summary, envName), output));
  else if (output.explicit)
    stdout.write(
      exportRows(SUMMARY_COLUMNS, { ...output, footer: summaryFooter(where) }, summaryRows(summary)),
    );
  else
    stdout.write(
      renderSummary(summary, {
        color: context.color,
        envName: where,
        columns: stdout.isTTY ? (stdout.columns ?? 80) : undefined,
        target: words,
      }),
    );
}
