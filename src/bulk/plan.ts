import { createReadStream } from 'node:fs';
import type { InventoryClient } from '../client/client';
import { PetinvError, usageError } from '../errors';
import type { OutputChoice } from '../output/choose';
import type { CommandContext } from '../output/context';
import { writePlan } from '../output/plan';
import { plural } from '../output/plural';
import { type BulkInput, readBulkInput } from './input';
import type { BulkOptions } from './options';
import { skippedJson, skippedResult } from './report';

/** The bulk input as a stream: stdin, or the file, read as it arrives (see readBulkInput). */
function openBulkSource(
  options: BulkOptions,
  context: CommandContext,
): Promise<AsyncIterable<Buffer | string>> {
  if (options.file === undefined || options.file === '-') {
    // Typed at a terminal, the input would otherwise look like a command that hangs.
    if (context.stdin.isTTY)
      context.stderr.write(
        'petinv: reading updates from stdin, one "petId quantity" a line; end with Ctrl-D on a line of its own (Ctrl-C cancels)\n',
      );
    return Promise.resolve(context.stdin);
  }
  const file = options.file;
  return new Promise((resolve, reject) => {
    const stream = createReadStream(file);
    stream.once('open', () => resolve(stream));
    stream.once('error', (error: NodeJS.ErrnoException) =>
      reject(usageError(`cannot read --file ${file}: ${error.code ?? error.message}`)),
    );
  });
}

/**
 * Bad input lines: in a run that streams results (--ndjson, --json) they are results too, so a script
 * that selects the failures sees them; otherwise each is a line on stderr. --strict stops here.
 */
function reportProblems(input: BulkInput, options: BulkOptions, context: CommandContext) {
  const inResults = !options.strict && (context.json || options.ndjson);
  const refused = options.strict === true && input.problems.length > 0;
  // --strict --json: the bad lines stand beside the one error line, as `skipped`.
  if (refused && context.json)
    throw usageError(
      `--strict: ${plural(input.problems.length, `bad ${input.unit}`)}; nothing was sent`,
    ).withJson({ skipped: input.problems.map(skippedResult) });
  for (const problem of input.problems) {
    // --json prints them at the head of its one array at the end.
    if (inResults) {
      if (options.ndjson) context.stdout.write(`${skippedJson(problem)}\n`);
    } else if (context.json) context.stderr.write(`${skippedJson(problem)}\n`);
    else
      context.stderr.write(
        `petinv: ${input.unit} ${problem.line}: ${problem.message}${options.strict ? '' : ' (skipped)'}\n`,
      );
  }
  if (refused) {
    throw usageError(`--strict: ${plural(input.problems.length, `bad ${input.unit}`)}; nothing was sent`);
  }
}

/**
 * The plan of a bulk run: its input read and checked, the bad lines reported (with --strict, the run
 * ends here). Nothing has been sent yet.
 */
export async function planBulk(options: BulkOptions, context: CommandContext): Promise<BulkInput> {
  const input = await readBulkInput(await openBulkSource(options, context)).catch((error: unknown) => {
    if (error instanceof PetinvError) throw error;
    const { code, message } = error as NodeJS.ErrnoException;
    throw usageError(
      `cannot read ${options.file === undefined ? 'stdin' : `--file ${options.file}`}: ${code ?? message}`,
    );
  });
  reportProblems(input, options, context);
  return input;
}

/** --dry-run: the plan against current stock; nothing is written. */
export async function rehearseBulk(
  input: BulkInput,
  client: InventoryClient,
  output: OutputChoice,
  context: CommandContext,
  envName: string,
) {
  const current = new Map((await client.listInventory()).map((item) => [item.petId, item]));
  const plan = Array.from(input.entries, (entry) => ({
    petId: entry.petId,
    to: entry.quantity,
    before: current.get(entry.petId),
  }));
  // The real run would end in exit 9, its skipped input reported and each unknown pet's update failing
  // with 404: so must its rehearsal, or `--dry-run && set` goes ahead.
  const skipped = input.problems.length;
  const unknown = plan.filter((change) => change.before === undefined).length;
  const failing = skipped > 0 || unknown > 0;
  // --json: the skipped lines head the one array, as in a real run (--ndjson printed them already). A
  // failing rehearsal's summary goes on its one error line.
  const summary = writePlan(plan, 'bulk', output, context, envName, input.problems.map(skippedResult), {
    summary: !(failing && context.json),
  });
  if (failing) {
    const problems = [
      ...(unknown > 0
        ? [`${plural(unknown, 'pet')} ${unknown === 1 ? 'is' : 'are'} not in the inventory`]
        : []),
      ...(skipped > 0 ? [`${plural(skipped, input.unit)} ${skipped === 1 ? 'was' : 'were'} skipped`] : []),
    ];
    throw new PetinvError(
      'partial',
      `dry run: ${problems.join(' and ')}; nothing was written to ${envName}`,
      { code: 'partial_failure' },
      { dryRun: summary },
    );
  }
}
