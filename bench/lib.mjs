import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export const root = join(import.meta.dirname, '..');
export const petinvBin = join(root, 'bin/petinv.js');
export const KEY = 'bench-key';

const madeDirectories = [];
/** A new directory under the system's temporary one; every one is removed when the bench exits. */
export const temporaryDirectory = () => {
  const directory = mkdtempSync(join(tmpdir(), 'petinv-bench-'));
  madeDirectories.push(directory);
  return directory;
};
process.on('exit', () => {
  for (const directory of madeDirectories) rmSync(directory, { recursive: true, force: true });
});

/** Starts a server process that prints a JSON readiness line to stderr; resolves once it is ready. */
export async function startProcess(args) {
  const started = performance.now();
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, PETINV_CONFIG_DIR: temporaryDirectory() },
  });
  const ready = await new Promise((resolve, reject) => {
    createInterface({ input: child.stderr }).on('line', (line) => {
      if (line.includes('"event":"listening"')) resolve(JSON.parse(line));
    });
    child.on('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
  });
  return {
    child,
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
  startProcess([petinvBin, 'serve', '--json', '--quiet', '--port', '0', '--api-key', KEY, ...args]);

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
