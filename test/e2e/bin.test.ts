import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { version } from '../../package.json';
import { type RunningServer, startInventoryServer } from '../../src/server/start';
import { PETINV_BIN, runPetinv, temporaryDirectory } from '../helpers/serve';

/**
 * The built bin as a process: what main(argv, io) cannot show in-process (test/cli has the rest), that
 * the shim hands main the process's own streams and env and turns its answer into the exit status.
 */

const KEY = 'bin-key';
let server: RunningServer;

beforeAll(async () => {
  server = await startInventoryServer({ port: 0, apiKeys: [KEY], seed: 12 });
});
afterAll(() => server.close());

describe('bin/petinv.cjs', () => {
  it('in a clone never built, says how to build it (exit 1, no stack)', () => {
    const clone = temporaryDirectory('petinv-unbuilt-');
    try {
      mkdirSync(join(clone, 'bin'));
      copyFileSync(PETINV_BIN, join(clone, 'bin', 'petinv.cjs'));
      const result = spawnSync(process.execPath, [join(clone, 'bin', 'petinv.cjs'), 'list'], {
        encoding: 'utf8',
      });
      expect(result.status).toBe(1);
      expect(result.stderr).toBe(`petinv: not built yet; run: cd ${clone}/ && npm ci && npm run build\n`);
    } finally {
      rmSync(clone, { recursive: true, force: true });
    }
  });

  it('prints the version of the package', async () => {
    expect(await runPetinv(['--version'])).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it('runs as bin/petinv.js too, for scripts that call it by that path, with the same exit status', () => {
    const bin = join(PETINV_BIN, '..', 'petinv.js');
    expect(spawnSync(process.execPath, [bin, '--version'], { encoding: 'utf8' })).toMatchObject({
      status: 0,
      stdout: `${version}\n`,
    });
    expect(spawnSync(process.execPath, [bin, 'nosuch'], { encoding: 'utf8' })).toMatchObject({ status: 2 });
  });

  it('runs a command with the process environment and streams, and exits with its status', async () => {
    const env = {
      PETINV_CONFIG_DIR: temporaryDirectory(),
      PETINV_ENV: 'local',
      PETINV_BASE_URL: server.baseUrl,
      PETINV_API_KEY: KEY,
    };
    expect(await runPetinv(['list', '--limit', '1'], { env })).toEqual({
      code: 0,
      stdout: '1\tavailable\t12\n',
      stderr: '',
    });
    const notFound = await runPetinv(['set', '424242', '1'], { env });
    expect(notFound.code).toBe(5);
    expect(notFound.stderr).toBe(
      'petinv: pet 424242 not found in local (404 pet_not_found: pet 424242 is not in the inventory)\n',
    );
    expect((await runPetinv(['frobnicate'], { env })).code).toBe(2);
  });
});

describe('the built bundle at start-up', () => {
  it("loads undici's HTTP/2 client (and node:http2) only if it is called, which petinv never does", () => {
    const index = join(import.meta.dirname, '../../dist/index.js');
    const loaded = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const { createAgent } = await import(${JSON.stringify(index)}); createAgent(1000);
         process.stdout.write(JSON.stringify(process.moduleLoadList.filter((name) => name.includes('http2'))));`,
      ],
      { encoding: 'utf8' },
    );
    expect(JSON.parse(loaded)).toEqual([]);
  });

  it('sends a one-request command over node:http, without loading undici, and a bulk run over undici', async () => {
    // undici's modules and its WebAssembly parser were most of a cold list's cost over a plain node:http
    // script (docs/performance.md). A preload records which transport's channel saw each request.
    const probe = temporaryDirectory('petinv-transport-probe-');
    const seen = join(probe, 'seen.txt');
    const preload = join(probe, 'preload.cjs');
    writeFileSync(
      preload,
      `const channels = require('node:diagnostics_channel');
       const note = (name) => () => require('node:fs').appendFileSync(${JSON.stringify(seen)}, name + '\\n');
       channels.subscribe('undici:request:create', note('undici'));
       channels.subscribe('http.client.request.start', note('node:http'));
       // undici's parser is WebAssembly, compiled at its first connection.
       const { Module } = WebAssembly;
       WebAssembly.Module = function (...args) {
         note('WebAssembly')();
         return new Module(...args);
       };
`,
    );
    const env = {
      PETINV_CONFIG_DIR: temporaryDirectory(),
      PETINV_ENV: 'local',
      PETINV_BASE_URL: server.baseUrl,
      PETINV_API_KEY: KEY,
      NODE_OPTIONS: `--require ${preload}`,
    };
    const run = async (args: string[], input?: string) => {
      rmSync(seen, { force: true });
      expect((await runPetinv(args, { env, input })).code).toBe(0);
      return [...new Set(readFileSync(seen, 'utf8').trim().split('\n'))];
    };
    expect(await run(['list'])).toEqual(['node:http']);
    expect(await run(['set', '3', '9'])).toEqual(['node:http']);
    expect(await run(['set', '--file', '-', '--yes'], 'petId,counted\n3,10\n4,11\n')).toEqual([
      'undici',
      'WebAssembly',
    ]);
  });
});
