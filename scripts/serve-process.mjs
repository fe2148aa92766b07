// Helpers shared by the tests (test/helpers/serve.ts), the bench (bench/lib.mjs) and the demo
// (scripts/demo.mjs): start a server process and wait for its readiness line, find a closed port, make
// temporary directories that are removed again. Plain JavaScript, so node runs it without a build.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export const PETINV_BIN = join(import.meta.dirname, '..', 'bin', 'petinv.cjs');

/** serve's JSON readiness line (and bench/bare-server.mjs's) carries this event. */
export const isReadinessLine = (line) => line.includes('"event":"listening"');

/**
 * Spawns `node ARGV` (a server that writes its JSON readiness line to stderr) and resolves once that line
 * is out, with the line parsed. Rejects, with what the process wrote, if it exits first.
 */
export async function spawnReadyServer(argv, { env = process.env, stdout = 'ignore' } = {}) {
  const child = spawn(process.execPath, argv, { env, stdio: ['ignore', stdout, 'pipe'] });
  let output = '';
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const ready = await new Promise((resolve, reject) => {
    createInterface({ input: child.stderr }).on('line', (line) => {
      output += `${line}\n`;
      if (isReadinessLine(line)) resolve(JSON.parse(line));
    });
    child.on('error', reject);
    void exited.then(({ code, signal }) =>
      reject(new Error(`${argv.join(' ')} exited with ${code ?? signal} before it was ready:\n${output}`)),
    );
  });
  return { child, ready, exited, output: () => output };
}

/** A port nothing listens on: bound on loopback, then released. */
export async function closedPort() {
  const probe = createServer();
  await new Promise((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

const made = new Set();

/** A new directory under the system's temporary directory, removed by removeTemporaryDirectories(). */
export function temporaryDirectory(prefix = 'petinv-test-') {
  const directory = mkdtempSync(join(tmpdir(), prefix));
  made.add(directory);
  return directory;
}

/** Removes every directory temporaryDirectory() made so far (and not yet removed). */
export function removeTemporaryDirectories() {
  for (const directory of made) {
    rmSync(directory, { recursive: true, force: true, maxRetries: 3 });
    made.delete(directory);
  }
}
