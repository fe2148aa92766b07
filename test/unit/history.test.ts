import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stateDirectory } from '../../src/config/paths';
import { type HistoryRun, parseHistory, serialize } from '../../src/history/runs';
import { MAX_HISTORY_RUNS, openHistory } from '../../src/history/store';
import { temporaryDirectory } from '../helpers/serve';

const open = (directory: string, baseUrl = 'http://127.0.0.1:4010/v1') => {
  const warnings: string[] = [];
  const history = openHistory({ directory, baseUrl, warn: (message) => warnings.push(message) });
  return { history, warnings };
};
const change = (petId: bigint, before: number | null, after: number) => ({ petId, before, after });

describe('the history of write runs', () => {
  it('lives under $XDG_STATE_HOME/petinv, or ~/.local/state/petinv when it is unset or relative', () => {
    expect(stateDirectory({ XDG_STATE_HOME: '/var/state' })).toBe('/var/state/petinv');
    expect(stateDirectory({ XDG_STATE_HOME: 'relative/state', HOME: '/home/a' })).toBe(
      '/home/a/.local/state/petinv',
    );
    expect(stateDirectory({})).toBe(join(homedir(), '.local', 'state', 'petinv'));
  });

  it('records runs with int64 petIds exact, one private file per service origin', async () => {
    const directory = temporaryDirectory();
    const { history, warnings } = open(directory);
    const run = await history.record({
      env: 'local',
      command: 'set --file a.csv',
      changes: [change(9223372036854775807n, 3, 4), change(2n, null, 1)],
    });
    expect(run?.id).toMatch(/^\d{8}T\d{6}-[0-9a-f]{4}$/);
    expect(history.read()).toEqual([run]);
    expect(statSync(history.file).mode & 0o777).toBe(0o600);
    expect(statSync(join(directory, 'history')).mode & 0o777).toBe(0o700);
    const other = open(directory, 'https://inventory.example.com/v1').history;
    expect(other.file).not.toBe(history.file);
    expect(other.read()).toEqual([]);
    // Another path on the same origin is the same service's history.
    expect(open(directory, 'http://127.0.0.1:4010/v2').history.file).toBe(history.file);
    expect(warnings).toEqual([]);
  });

  it(`keeps the newest ${MAX_HISTORY_RUNS} runs`, async () => {
    const { history } = open(temporaryDirectory());
    for (let index = 0; index < MAX_HISTORY_RUNS + 5; index++)
      await history.record({
        env: 'local',
        command: `set ${index}`,
        changes: [change(1n, index, index + 1)],
      });
    const runs = history.read();
    expect(runs).toHaveLength(MAX_HISTORY_RUNS);
    expect(runs[0]?.command).toBe('set 5');
    expect(readFileSync(history.file, 'utf8').trimEnd().split('\n')).toHaveLength(MAX_HISTORY_RUNS);
  });

  it('reports damaged lines and reads the rest; makes a wider file private again', async () => {
    const { history, warnings } = open(temporaryDirectory());
    await history.record({ env: 'local', command: 'set', changes: [change(1n, 1, 2)] });
    writeFileSync(history.file, `{"id":1}\nnot json\n${readFileSync(history.file, 'utf8')}`);
    chmodSync(history.file, 0o644);
    expect(history.read()).toHaveLength(1);
    expect(warnings).toEqual([expect.stringMatching(/has 2 damaged lines \(line 1, 2\), left out/)]);
    await history.record({ env: 'local', command: 'adjust +1', changes: [change(1n, 2, 3)] });
    expect(statSync(history.file).mode & 0o777).toBe(0o600);
    expect(history.read().map((run) => run.command)).toEqual(['set', 'adjust +1']);
  });

  it('a line whose text holds escape sequences or control characters is damaged, never shown', async () => {
    const { history, warnings } = open(temporaryDirectory());
    await history.record({ env: 'local', command: 'set', changes: [change(1n, 1, 2)] });
    const [good] = readFileSync(history.file, 'utf8').trimEnd().split('\n');
    const run = JSON.parse(good as string);
    const edited = [
      { ...run, command: 'set \u001b]0;pwned\u0007\u001b[2J' },
      { ...run, env: 'local\u001b[31m' },
      { ...run, id: `${run.id}\u001b[31m` },
      { ...run, service: 'http://x/v1\u202e' },
      { ...run, at: 'yesterday' },
    ].map((line) => JSON.stringify(line));
    writeFileSync(history.file, `${edited.join('\n')}\n${good}\n`);
    expect(history.read().map((read) => read.command)).toEqual(['set']);
    expect(warnings).toEqual([expect.stringMatching(/has 5 damaged lines \(line 1, 2, 3, 4, 5\), left out/)]);
  });

  it('a run after a torn last line (no newline at its end) is recorded on a line of its own', async () => {
    const { history, warnings } = open(temporaryDirectory());
    await history.record({ env: 'local', command: 'set 1 2', changes: [change(1n, 1, 2)] });
    await history.record({ env: 'local', command: 'set 2 3', changes: [change(2n, 2, 3)] });
    const text = readFileSync(history.file, 'utf8');
    writeFileSync(history.file, text.slice(0, -10));
    const run = await history.record({ env: 'local', command: 'set 3 4', changes: [change(3n, 3, 4)] });
    // The newest run is the one petinv undo takes back: it must not be glued to the torn line and lost.
    expect(history.read().at(-1)).toEqual(run);
    expect(history.read().map((each) => each.command)).toEqual(['set 1 2', 'set 3 4']);
    expect(warnings).toEqual([
      expect.stringMatching(/damaged line \(line 2\)/),
      expect.stringMatching(/damaged line \(line 2\)/),
    ]);
  });

  it('two runs recording at once both land: the file is locked while one writes', async () => {
    const { history } = open(temporaryDirectory());
    await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        history.record({ env: 'local', command: `set ${index}`, changes: [change(1n, index, index + 1)] }),
      ),
    );
    expect(history.read()).toHaveLength(20);
  });

  it('a history that cannot be written is a warning, never an exception', async () => {
    const directory = temporaryDirectory();
    // A file where the history folder should be: mkdir fails, whoever the user is (root included).
    writeFileSync(join(directory, 'history'), '');
    const { history, warnings } = open(directory);
    expect(
      await history.record({ env: 'local', command: 'set', changes: [change(1n, 1, 2)] }),
    ).toBeUndefined();
    expect(warnings).toEqual([
      expect.stringMatching(/^this run was not recorded in the history .*petinv undo will not know it$/),
    ]);
  });

  it('a history that is a FIFO or a link to a device is a warning: neither a read nor a write waits on it', async () => {
    for (const plant of [
      (file: string) => execFileSync('mkfifo', [file]),
      (file: string) => symlinkSync('/dev/zero', file),
    ]) {
      const directory = temporaryDirectory();
      const { history, warnings } = open(directory);
      mkdirSync(join(directory, 'history'));
      plant(history.file);
      // A FIFO blocked these until a writer came, for ever; /dev/zero was read until memory ran out.
      expect(history.read()).toEqual([]);
      expect(
        await history.record({ env: 'local', command: 'set', changes: [change(1n, 1, 2)] }),
      ).toBeUndefined();
      expect(warnings).toEqual([
        expect.stringMatching(/^cannot read the history .*: (not a regular file|ELOOP)$/),
        expect.stringMatching(/^this run was not recorded in the history .*petinv undo will not know it$/),
      ]);
    }
  });

  it('a run begun is there at once, unfinished; amendments replace its pets; its end replaces it', async () => {
    const { history, warnings } = open(temporaryDirectory());
    const journal = await history.begin({
      env: 'local',
      command: 'set --file a.csv',
      changes: [change(1n, 1, 10), change(2n, 2, 20), change(3n, null, 30)],
    });
    const [begun] = history.read();
    expect(begun).toMatchObject({
      marks: ['unfinished'],
      changes: [change(1n, 1, 10), change(2n, 2, 20), change(3n, null, 30)],
    });
    // A colleague moved pet 2 to 5 first; pet 1 held 10 already (before and after alike: not written).
    await Promise.all([journal.amend([change(2n, 5, 20)]), journal.amend([change(1n, 10, 10)])]);
    expect(history.read()).toEqual([{ ...begun, changes: [change(2n, 5, 20), change(3n, null, 30)] }]);
    // Recorded meanwhile by another petinv: read after the run until the run's end moves it last.
    await history.record({ env: 'local', command: 'adjust 9 +1', changes: [change(9n, 1, 2)] });
    const ended = await journal.finish({ changes: [change(2n, 5, 20)], marks: ['interrupted'] });
    expect(ended).toMatchObject({ id: begun?.id, at: begun?.at, marks: ['interrupted'] });
    expect(history.read().map((run) => run.command)).toEqual(['adjust 9 +1', 'set --file a.csv']);
    expect(history.read()[1]).toEqual(ended);
    // A stray line of the run after its end (a copy, an edit) changes nothing.
    writeFileSync(history.file, `${readFileSync(history.file, 'utf8').split('\n')[1]}\n`, { flag: 'a' });
    expect(history.read()[1]).toEqual(ended);
    expect(warnings).toEqual([]);
  });

  it('a run begun that wrote nothing is taken out at its end; one whose start failed is recorded at its end', async () => {
    const { history } = open(temporaryDirectory());
    const journal = await history.begin({ env: 'local', command: 'set -', changes: [change(1n, 1, 2)] });
    expect(await journal.finish({ changes: [] })).toBeUndefined();
    expect(history.read()).toEqual([]);
    // Nothing planned, nothing begun: only a run that wrote something is kept.
    const empty = await history.begin({ env: 'local', command: 'set -', changes: [] });
    expect(readFileSync(history.file, 'utf8').split('\n')).toHaveLength(3);
    expect(await empty.finish({ changes: [change(1n, 1, 2)] })).toMatchObject({ command: 'set -' });
    expect(history.read()).toHaveLength(1);

    const directory = temporaryDirectory();
    writeFileSync(join(directory, 'history'), '');
    const failing = open(directory);
    const unrecorded = await failing.history.begin({
      env: 'local',
      command: 'set -',
      changes: [change(1n, 1, 2)],
    });
    await unrecorded.amend([change(1n, 3, 2)]);
    expect(await unrecorded.finish({ changes: [change(1n, 3, 2)] })).toBeUndefined();
    expect(failing.warnings).toEqual([
      expect.stringMatching(
        /^this run's start was not recorded in the history .*stopped outright, it would leave nothing for petinv undo$/,
      ),
      expect.stringMatching(/^this run was not recorded in the history .*petinv undo will not know it$/),
    ]);
  });

  it('an unfinished run is kept past the bounds: newer runs and a large one never push it out', async () => {
    const { history } = open(temporaryDirectory());
    const journal = await history.begin({
      env: 'local',
      command: 'set --file long.csv',
      changes: [change(1n, 1, 2)],
    });
    for (let index = 0; index < MAX_HISTORY_RUNS + 5; index++)
      await history.record({
        env: 'local',
        command: `adjust ${index}`,
        changes: [change(2n, index, index + 1)],
      });
    const large = Array.from({ length: 120_000 }, (_, index) => change(BigInt(index + 10), 1, 2));
    await history.record({ env: 'local', command: 'set --file big.csv', changes: large });
    const runs = history.read();
    expect(runs).toHaveLength(MAX_HISTORY_RUNS);
    expect(runs[0]).toMatchObject({ command: 'set --file long.csv', marks: ['unfinished'] });
    expect(runs.at(-1)?.command).toBe('set --file big.csv');
    // So is the run an unfinished undo takes back: undone again, by its id, to finish.
    const undo = await history.begin({
      env: 'local',
      command: `undo ${runs[1]?.id}`,
      changes: [change(2n, 6, 5)],
    });
    for (let index = 0; index < 3; index++)
      await history.record({
        env: 'local',
        command: `adjust x${index}`,
        changes: [change(3n, index, index + 1)],
      });
    const commands = history.read().map((run) => run.command);
    expect(commands.slice(0, 3)).toEqual(['set --file long.csv', runs[1]?.command, runs[6]?.command]);
    expect(commands).toContain(`undo ${runs[1]?.id}`);
    await undo.finish({ changes: [change(2n, 6, 5)] });
    // Ended, it is a run like the others, and the next rewrite may let it go.
    await journal.finish({ changes: [change(1n, 1, 2)] });
    expect(history.read().at(-1)).toMatchObject({ command: 'set --file long.csv' });
  });

  it('an unfinished run an undo took back whole is bounded as the others are (QA: they piled up)', async () => {
    const { history } = open(temporaryDirectory());
    await history.begin({ env: 'local', command: 'set --file killed.csv', changes: [change(1n, 1, 2)] });
    const [killed] = history.read();
    const record = async (command: string, marks: HistoryRun['marks'] = []) =>
      await (await history.begin({ env: 'local', command, changes: [change(1n, 2, 1)] })).finish({
        changes: [change(1n, 2, 1)],
        marks,
      });
    // An undo that stopped or failed did not take it all back: the run is still kept.
    await record(`undo ${killed?.id}`, ['interrupted', 'failed']);
    const adjusts = async (count: number) => {
      for (let index = 0; index < count; index++)
        await history.record({
          env: 'local',
          command: `adjust ${index}`,
          changes: [change(2n, index, index + 1)],
        });
    };
    await adjusts(MAX_HISTORY_RUNS);
    expect(history.read()[0]?.id).toBe(killed?.id);
    await record(`undo ${killed?.id}`);
    await adjusts(MAX_HISTORY_RUNS);
    expect(history.read().map((run) => run.id)).not.toContain(killed?.id);
  });

  it('two runs that drew the same id are two runs: only a run’s own later lines merge with it', () => {
    const run = {
      id: '20261128T100000-abcd',
      at: '2026-11-28T10:00:00.123Z',
      env: 'local',
      service: 'http://127.0.0.1:4010/v1',
      command: 'adjust 1 +1',
      changes: [change(1n, 1, 2)],
    };
    const other = { ...run, command: 'adjust 2 +1', changes: [change(2n, 1, 2)] };
    const later = { ...run, at: '2026-11-28T10:00:00.456Z', command: 'set 3 4', changes: [change(3n, 3, 4)] };
    const text = [run, other, later].map(serialize).join('');
    expect(parseHistory(text, () => {}).map((kept) => kept.command)).toEqual([
      'adjust 1 +1',
      'adjust 2 +1',
      'set 3 4',
    ]);
  });
});
