import { renderSummary, summarizeInventory, summaryJson } from '../output/summary';
import type { SummaryFlags } from '../program';
import { connect } from './connect';
import type { CommandContext } from './context';

/** Pets and units per status, low stock and the largest stocks, in one pass over the list. */
export async function runSummary(flags: SummaryFlags, context: CommandContext): Promise<void> {
  const { client, envName } = await connect(flags, context);
  const summary = summarizeInventory(await client.listInventory(), flags.low, flags.top);
  const { stdout } = context;
  stdout.write(
    context.json
      ? summaryJson(summary, envName)
      : renderSummary(summary, {
          color: context.color,
          envName,
          columns: stdout.isTTY ? (stdout.columns ?? 80) : undefined,
        }),
  );
}
