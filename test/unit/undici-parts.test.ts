import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import * as undici from 'undici';
import undiciPackage from 'undici/package.json' with { type: 'json' };
import { describe, expect, it } from 'vitest';
import { createAgent } from '../../src/client/undici';
import { undiciTransport } from '../../src/client/undici-transport';
import { useFakeServer } from '../helpers/lying-server';

/**
 * src/client/undici.ts imports one of undici's internal modules (lib/dispatcher/agent.js) to spare the CLI's
 * start the rest of undici; src/client/undici-transport.ts drives it with `dispatch` and a handler of its own. Internals can move in any
 * release; these tests fail loudly when they do, rather than a user's `petinv list` failing.
 */

/** The major whose internal layout src/client/undici.ts and src/client/undici-parts.d.ts were written against. */
const CHECKED_MAJOR = 8;

const SOURCE = join(import.meta.dirname, '../../src');

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(directory, entry.name)) : [join(directory, entry.name)],
  );
}

describe("undici's internals, used behind one module", () => {
  it(`is undici ${CHECKED_MAJOR}.x, the major the deep imports were checked against`, () => {
    const major = Number(undiciPackage.version.split('.')[0]);
    expect(
      major,
      `undici ${undiciPackage.version} is installed: check that src/client/undici.ts's deep imports still exist ` +
        'and mean the same, then update CHECKED_MAJOR here',
    ).toBe(CHECKED_MAJOR);
  });

  it('imports them in src/client/undici.ts (and its type declarations) only', () => {
    const deep = sourceFiles(SOURCE)
      .filter((file) => /['"]undici\/lib\//.test(readFileSync(file, 'utf8')))
      .map((file) => relative(SOURCE, file));
    expect(deep.sort()).toEqual(['client/undici-parts.d.ts', 'client/undici.ts']);
  });

  it("builds undici's own Agent", async () => {
    const agent = createAgent(1000);
    try {
      expect(agent).toBeInstanceOf(undici.Agent);
    } finally {
      await agent.close();
    }
  });
});

describe('a request through the deep imports', () => {
  const server = useFakeServer((req, res) => res.end(`${req.method} ${req.url} ${req.headers['x-probe']}`));

  it('reaches a real server and reads its answer', async () => {
    const agent = createAgent(1000);
    try {
      const response = await undiciTransport(agent)({
        method: 'GET',
        url: `${server.origin}/v1/inventory`,
        origin: server.origin,
        path: '/v1/inventory',
        headers: { 'x-probe': 'deep' },
        timeoutMs: 1000,
        maxBodyBytes: 1000,
      });
      expect(response.status).toBe(200);
      expect(response.text).toBe('GET /v1/inventory deep');
    } finally {
      await agent.close();
    }
  });
});
