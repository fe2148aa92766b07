import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/program/build';
import { findCycles, type ImportEdge, readImportGraph } from '../helpers/import-graph';
import { temporaryDirectory } from '../helpers/serve';

/**
 * The layout ARCHITECTURE.md draws, held to the sources: the rooms of src/ and the one direction of their
 * arrows, and no import cycle (type-only and lazy imports counted, as `madge --circular` counts them).
 */

const SRC = fileURLToPath(new URL('../../src', import.meta.url));
const graph = readImportGraph(SRC);

/** The room a module is in: its top folder, or for a file at the top, the room it belongs to. */
function roomOf(module: string): string {
  const [top] = module.split('/');
  if (top === undefined) throw new Error(`no room for ${module}`);
  if (!top.endsWith('.ts')) return top === 'types' ? 'base' : top;
  const entries = ['cli.ts', 'launch.ts', 'index.ts'];
  return entries.includes(top) ? 'entry' : 'base';
}

/** What each room may import besides itself; rooms not listed here (the entries) may import any. */
const BASE = ['contract', 'base', 'files'];
/** The CLI's workshops; history/ is the local record of write runs that undo reads (issue 20). */
const CLI_ROOMS = ['config', 'output', 'help', 'bulk', 'watch', 'history'];
const MAY_IMPORT: Record<string, readonly string[]> = {
  contract: [],
  base: [],
  files: ['base'],
  client: BASE,
  server: BASE,
  ...Object.fromEntries(CLI_ROOMS.map((room) => [room, [...BASE, 'client', 'server', ...CLI_ROOMS]])),
  commands: [...BASE, 'client', 'server', ...CLI_ROOMS],
  program: [...BASE, 'client', 'server', ...CLI_ROOMS, 'commands'],
};

const show = (edges: readonly ImportEdge[]) => edges.map(({ from, to }) => `${from} -> ${to}`);

describe('the layout of src/', () => {
  it('reads the whole source tree', () => {
    // A walk that found nothing would pass every test below.
    expect(graph.modules.length).toBeGreaterThan(80);
    expect(graph.edges.length).toBeGreaterThan(300);
    expect(graph.modules).toEqual(
      expect.arrayContaining(['cli.ts', 'contract/schemas.ts', 'client/client.ts']),
    );
    // Every module is in a room this test (and ARCHITECTURE.md) knows: a new room is placed on purpose.
    const rooms = [
      'entry',
      'base',
      'contract',
      'files',
      'client',
      'server',
      ...CLI_ROOMS,
      'commands',
      'program',
    ];
    const unplaced = graph.modules.filter((module) => !rooms.includes(roomOf(module)));
    expect(unplaced).toEqual([]);
    for (const room of ['contract', 'client', 'server', 'commands', 'program'])
      expect(
        graph.modules.some((module) => roomOf(module) === room),
        room,
      ).toBe(true);
  });

  it('has no import cycle, type-only and lazy imports included', () => {
    expect(findCycles(graph)).toEqual([]);
  });

  it('points every import down or across, never up: contract at the bottom, the CLI on top', () => {
    const upward = graph.edges.filter(({ from, to }) => {
      const [source, target] = [roomOf(from), roomOf(to)];
      const allowed = MAY_IMPORT[source];
      return source !== target && allowed !== undefined && !allowed.includes(target);
    });
    expect(show(upward)).toEqual([]);
  });

  it('keeps the client and the server side by side: neither imports the other', () => {
    const across = graph.edges.filter(
      ({ from, to }) =>
        (roomOf(from) === 'client' && roomOf(to) === 'server') ||
        (roomOf(from) === 'server' && roomOf(to) === 'client'),
    );
    expect(show(across)).toEqual([]);
  });

  it('ends options at the command: nothing below the commands imports the program or a command', () => {
    const below = graph.edges.filter(
      ({ from, to }) =>
        !['commands', 'program', 'entry'].includes(roomOf(from)) &&
        ['commands', 'program'].includes(roomOf(to)),
    );
    expect(show(below)).toEqual([]);
  });

  it('gives each command a file of its own in commands/, named after it, that runs it', () => {
    // ARCHITECTURE.md: `src/commands/<name>.ts` with a `run<Name>` function (env's and config's
    // subcommands are theirs: runEnvUse, runConfigPath).
    const misplaced = Object.keys(COMMANDS).filter((name) => {
      const file = `commands/${name}.ts`;
      const run = `run${name[0]?.toUpperCase()}${name.slice(1)}`;
      return (
        !graph.modules.includes(file) ||
        !new RegExp(`export (async )?function ${run}\\w*\\(`).test(readFileSync(join(SRC, file), 'utf8'))
      );
    });
    expect(Object.keys(COMMANDS).length).toBeGreaterThan(10);
    expect(misplaced).toEqual([]);
  });

  it('keeps the contract free of petinv and of any package but zod', () => {
    const contract = graph.packages.filter(({ from }) => roomOf(from) === 'contract');
    expect(contract.length).toBeGreaterThan(0);
    expect(show(contract.filter(({ to }) => to !== 'zod' && !to.startsWith('zod/')))).toEqual([]);
  });

  it('writes files one way: nothing outside files/ renames a file (atomic-write.ts replaces and moves them)', () => {
    // A temporary file renamed into place is a hand-written atomic write; a file moved aside goes through
    // moveDurably, which makes the move durable too.
    const renames = /\brename(Sync)?\s*\(/;
    const handWritten = graph.modules.filter(
      (module) => roomOf(module) !== 'files' && renames.test(readFileSync(join(SRC, module), 'utf8')),
    );
    expect(handWritten).toEqual([]);
    // The pattern finds what it is for.
    expect(renames.test('files.renameSync(temporary, path);')).toBe(true);
    expect(renames.test('await rename(tmpPath, path);')).toBe(true);
    expect(renames.test('await moveDurably(files, journalPath, keptAt);')).toBe(false);
  });

  it('leaves undici to the client', () => {
    const undici = graph.packages.filter(({ to }) => to === 'undici' || to.startsWith('undici/'));
    expect(undici.length).toBeGreaterThan(0);
    expect(show(undici.filter(({ from }) => roomOf(from) !== 'client'))).toEqual([]);
  });
});

describe('the import scanner', () => {
  it('sees static, type-only, re-exported and lazy imports, and packages apart', () => {
    const root = temporaryDirectory();
    mkdirSync(join(root, 'room'));
    const files: Record<string, string> = {
      'a.ts': "import type { B } from './b';\nexport type { C } from './room/c';\n",
      'b.ts': "import { z } from 'zod';\nexport const load = () => import('./room');\nexport type B = 1;\n",
      'room/c.ts': "import {\n  a,\n} from '../a';\nexport type C = 2;\n",
      'room/index.ts': "export * from './c';\n",
    };
    for (const [name, text] of Object.entries(files)) writeFileSync(join(root, name), text);
    const scanned = readImportGraph(root);
    expect(scanned.modules).toEqual(['a.ts', 'b.ts', 'room/c.ts', 'room/index.ts']);
    expect(show(scanned.edges).sort()).toEqual([
      'a.ts -> b.ts',
      'a.ts -> room/c.ts',
      'b.ts -> room/index.ts',
      'room/c.ts -> a.ts',
      'room/index.ts -> room/c.ts',
    ]);
    expect(show(scanned.packages)).toEqual(['b.ts -> zod']);
    expect(findCycles(scanned)).toEqual([['a.ts', 'b.ts', 'room/c.ts', 'room/index.ts']]);
  });

  it('refuses a relative import it cannot resolve, rather than leaving an edge out', () => {
    const root = temporaryDirectory();
    writeFileSync(join(root, 'a.ts'), "import { gone } from './gone';\n");
    expect(() => readImportGraph(root)).toThrow('a.ts imports ./gone, which is not a file');
  });
});

describe('the cycle finder', () => {
  const graphOf = (edges: [string, string][]) => ({
    modules: [...new Set(edges.flat())].sort(),
    edges: edges.map(([from, to]) => ({ from, to })),
    packages: [],
  });

  it('finds a cycle of two, a longer one, and a module that imports itself', () => {
    const cycles = findCycles(
      graphOf([
        ['a.ts', 'b.ts'],
        ['b.ts', 'a.ts'],
        ['c.ts', 'd.ts'],
        ['d.ts', 'e.ts'],
        ['e.ts', 'c.ts'],
        ['f.ts', 'f.ts'],
        ['g.ts', 'a.ts'],
      ]),
    );
    expect(cycles).toEqual(expect.arrayContaining([['a.ts', 'b.ts'], ['c.ts', 'd.ts', 'e.ts'], ['f.ts']]));
    expect(cycles).toHaveLength(3);
  });

  it('finds none in a graph whose arrows all point one way', () => {
    expect(
      findCycles(
        graphOf([
          ['a.ts', 'b.ts'],
          ['a.ts', 'c.ts'],
          ['b.ts', 'c.ts'],
        ]),
      ),
    ).toEqual([]);
  });
});
