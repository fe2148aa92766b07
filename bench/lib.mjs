import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  temporaryDirectory as makeTemporaryDirectory,
  removeTemporaryDirectories,
  spawnReadyServer,
} from '../scripts/serve-process.mjs';

export const root = join(import.meta.dirname, '..');
export const petinvBin = join(root, 'bin/petinv.cjs');
export const KEY = 'bench-key';

export const temporaryDirectory = () => makeTemporaryDirectory('petinv-bench-');
// The bench's data files, configs and scripts go when it ends, Ctrl-C included.
process.once('exit', removeTemporaryDirectories);
process.once('SIGINT', () => process.exit(130));

/** Starts a server process that prints a JSON readiness line to stderr; resolves once it is ready. */
export async function startProcess(args, label = 'the server') {
  const started = performance.now();
  const { child, ready } = await spawnReadyServer(args, {
    env: { ...process.env, PETINV_CONFIG_DIR: temporaryDirectory() },
  });
  return {
    child,
    label,
    baseUrl: ready.baseUrl,
    startMs: performance.now() - started,
    /** Peak resident memory so far, in MiB, from the kernel's own accounting. */
    peakMiB: () =>
      Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024,
    stop: () =>
      new Promise((resolve) => {
        child.on('exit', resolve);
        child.kill('SIGTERM');
      }),
  };
}

export const startPetinv = (args) =>
  startProcess(
    [petinvBin, 'serve', '--json', '--quiet', '--port', '0', '--api-key', KEY, ...args],
    'petinv serve',
  );

export const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

export function printTable(title, rows) {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => String(row[column]).length)));
  console.log(`\n${title}`);
  for (const [index, row] of rows.entries()) {
    console.log(`| ${row.map((cell, column) => String(cell).padEnd(widths[column])).join(' | ')} |`);
    if (index === 0) console.log(`| ${widths.map((width) => '-'.repeat(width)).join(' | ')} |`);
  }
}

/**
 * The CPU seconds of a child of `bash -c '...; times'`: `times` prints the shell's own user and system
 * times, then its children's ("0m1.234s 0m0.567s"), on the last line of the output.
 */
export function childCpuSeconds(output) {
  const [user, system] = [
    ...output
      .trim()
      .split('\n')
      .at(-1)
      .matchAll(/(\d+)m([\d.]+)s/g),
  ].map((match) => Number(match[1]) * 60 + Number(match[2]));
  return user + system;
}
