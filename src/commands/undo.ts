import { hostname } from 'node:os';
import { EntryStore } from '../bulk/entries';
import { runPipeline } from '../bulk/pipeline';
import { writeNotice } from '../bulk/plan';
import { stringifyJson } from '../contract/json';
import { usageError } from '../errors';
import { ownerIsRunning } from '../files/lock';
import { undoCommand } from '../history/runs';
import { terminalSession } from '../history/session';
import { type HistoryRun, MAX_HISTORY_RUNS } from '../history/store';
import { chooseOutput, refuseFieldsInJson } from '../output/choose';
import type { CommandContext } from '../output/context';
import { chooseColumns } from '../output/exporter';
import { PLAN_COLUMNS } from '../output/plan';
import { plural } from '../output/plural';
import { printable } from '../printable';
import { confirmChange } from './arguments';
import { connect } from './connect';
import type { GlobalFlags } from './flags';
import { bulkShape } from './options';
import { historyFor } from './record';
import type { SetFlags } from './set';

/** undo's flags (declared for commander in src/program/inventory.ts). */
export type UndoFlags = GlobalFlags &
  Pick<SetFlags, 'dryRun' | 'force' | 'concurrency' | 'pipelining' | 'yes'>;

/** A run as undo names it: `run ID (COMMAND, at WHEN UTC, N pets)`. */
export const describeRun = (run: HistoryRun) =>
  `run ${run.id} (${run.command}, at ${run.at.replace('T', ' ').replace(/\.\d+Z$|Z$/, '')} UTC, ${plural(run.changes.length, 'pet')})`;

/**
 * The run named (its id, or a prefix only it has), else the newest made in this terminal session: a run
 * made since in another terminal (a colleague's, with the same account) is passed over with a notice
 * naming it, and when this session made none, undo refuses and names the newest run.
 */
function chooseRun(runs: readonly HistoryRun[], name: string | undefined, file: string, session: string) {
  if (runs.length === 0)
    throw usageError(`nothing to undo: no write run is recorded for this service (${file})`);
  if (name === undefined) {
    const index = runs.findLastIndex((run) => run.session === session);
    const newest = runs.at(-1) as HistoryRun;
    if (index === -1)
      throw usageError(
        `the newest ${describeRun(newest)} was made in another terminal, and none in this one; petinv undo ${newest.id} takes it back`,
      );
    return { run: runs[index] as HistoryRun, passedOver: runs.slice(index + 1) };
  }
  const exact = runs.find((run) => run.id === name);
  // An empty id (`undo "$ID"` with ID unset) is the start of every id, and names none of them.
  const matches = exact ? [exact] : name === '' ? [] : runs.filter((run) => run.id.startsWith(name));
  if (matches.length === 1) return { run: matches[0] as HistoryRun, passedOver: [] };
  // The file is in order of ends, unfinished runs kept whatever their age; an id begins with its start, to
  // the second: one started no later than the oldest run the bound kept was dropped by it (QA).
  const oldest = runs.find((run) => !run.marks?.includes('unfinished')) ?? (runs[0] as HistoryRun);
  const started = (id: string) => /^\d{8}T\d{6}/.exec(id)?.[0];
  if (matches.length === 0 && (started(name) ?? '~') <= (started(oldest.id) ?? ''))
    throw usageError(
      `run ${printable(name, 40)} is older than every run the history of this service keeps (the newest ${MAX_HISTORY_RUNS}; the oldest now ${describeRun(oldest)}): if it was made here, it was dropped, and undo cannot take it back`,
    );
  throw usageError(
    matches.length === 0
      ? `no run ${JSON.stringify(name)} in the history of this service; see petinv history`
      : `${plural(matches.length, 'run')} begin with ${JSON.stringify(name)}; give more of the id (petinv history)`,
  );
}

/**
 * Writes back a run's before-values where the pets still hold its after-values (the others are conflicts,
 * exit 11, unless --force); recorded as a run of its own, so undoing it redoes.
 */
export async function runUndo(name: string | undefined, flags: UndoFlags, context: CommandContext) {
  const output = chooseOutput(flags, context);
  refuseFieldsInJson(output, flags.dryRun ? 'a dry run' : 'undo results', ['json', 'ndjson']);
  if (flags.dryRun) chooseColumns(PLAN_COLUMNS, output.fields, output.format);
  const shape = bulkShape(flags.concurrency, flags.pipelining);
  const connection = await connect(flags, context, { shape });
  // Read first: the service may say which store it is, and the history is the store's (history/store.ts).
  const sentAt = performance.now();
  const items = await connection.client.listInventory();
  const history = historyFor(connection.baseUrl, context, connection.client.storeId ?? null);
  const { run, passedOver } = chooseRun(history.read(), name, history.file, terminalSession());
  // Its pets would be written back while it goes on writing them.
  if (run.by?.host === hostname() && ownerIsRunning(run.by))
    throw usageError(
      `run ${run.id} is still running (petinv, pid ${run.by.pid}): undo it once it has ended, or stop it first (Ctrl-C) to take back what it wrote so far`,
    );
  const entries = new EntryStore();
  let unknown = 0;
  run.changes.forEach(({ petId, before, after }, index) => {
    // A pet that was not in the inventory before the run has no quantity to go back to.
    if (before === null) unknown++;
    else entries.push(index + 1, petId, before, after);
  });
  const notices: string[] = [];
  if (unknown > 0)
    notices.push(
      `${plural(unknown, 'pet')} of run ${run.id} had no quantity before it (not in the inventory); left as ${unknown === 1 ? 'it is' : 'they are'}`,
    );
  if (run.marks?.includes('unfinished'))
    notices.push(
      `run ${run.id} did not record its end (petinv was stopped outright, or is still running it): these are the pets it planned, and only those holding what it would have written are written back (a colleague's change to that very quantity too: who wrote it cannot be told)`,
    );
  if (run.env !== connection.where)
    notices.push(`run ${run.id} was made through ${run.env}; undoing it through ${connection.where}`);
  for (const other of passedOver)
    notices.push(
      `passing over ${describeRun(other)}, made in another terminal: petinv undo ${other.id} takes it back`,
    );
  for (const notice of notices) writeNotice(notice, context);
  // What it takes back, said before anything is planned or asked: a line, or with --json a JSON line.
  context.stderr.write(
    context.json
      ? `${stringifyJson({ undo: { id: run.id, command: run.command, at: run.at, pets: run.changes.length } })}\n`
      : `petinv: undoing ${describeRun(run)}\n`,
  );
  await runPipeline(
    { entries, problems: [], notices, unit: 'item' },
    // Messages name the environment, or the URL when --base-url or PETINV_BASE_URL chose it (connect.ts).
    { ...connection, envName: connection.where, first: { items, sentAt } },
    {
      dryRun: flags.dryRun === true,
      all: false,
      force: flags.force === true,
      concurrency: shape.connections * shape.pipelining,
      ndjson: output.format === 'ndjson',
      output,
      confirm: (question) => confirmChange(connection, question, flags.yes, context),
      question: (updates) => `Undo ${describeRun(run)}: ${plural(updates, 'update')}`,
      command: undoCommand(run.id),
      again: `run petinv undo ${run.id} again to send them (pets already back are skipped)`,
      resend: `run petinv undo ${run.id} again: a second send cannot apply one twice, and each pet is checked again`,
      history: () => history,
      undo: true,
    },
    context,
  );
}
