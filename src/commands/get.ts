import { chooseOutput } from '../output/choose';
import type { CommandContext } from '../output/context';
import { checkItemFields, itemExporter } from '../output/inventory';
import { parsePetIdArgument } from './arguments';
import { connect } from './connect';
import { readCurrent } from './current';
import type { GlobalFlags } from './flags';

/** One pet, as `list` prints its row (the item itself with --json), read by client.findInventoryItem. */
export async function runGet(petIdText: string, flags: GlobalFlags, context: CommandContext) {
  const petId = parsePetIdArgument(petIdText);
  const output = chooseOutput(flags, context);
  checkItemFields(output);
  const { client, where } = await connect(flags, context);
  const item = await readCurrent(client, petId, where);
  const exporter = itemExporter(output, where, 'one');
  context.stdout.write(exporter.rows([item]) + exporter.end());
}
