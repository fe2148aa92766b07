import { chooseOutput } from '../output/choose';
import { checkItemFields, itemExporter } from '../output/inventory';
import type { GetFlags } from '../program';
import { parsePetIdArgument } from './arguments';
import { connect } from './connect';
import type { CommandContext } from './context';
import { readCurrent } from './plan';

/**
 * `petinv get <petId>`: one pet, as `list` would print its row (a table on a terminal, TSV in a pipe, the
 * item itself with --json). The spec has no endpoint for one pet, so it reads the whole list (a list
 * that names the pet twice is refused: which of the two is its stock is not known).
 */
export async function runGet(petIdText: string, flags: GetFlags, context: CommandContext) {
  const petId = parsePetIdArgument(petIdText);
  const output = chooseOutput(flags, context, context.stdout.isTTY ? 'table' : 'tsv');
  checkItemFields(output);
  const { client, envName } = await connect(flags, context);
  const item = await readCurrent(client, petId, envName);
  const exporter = itemExporter(output, envName, 'one');
  context.stdout.write(exporter.rows([item]) + exporter.end());
}
