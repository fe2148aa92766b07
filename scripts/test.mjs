// npm test: the typecheck runs beside lint and the build (tsc, cold, takes longer than the other two
// together, and each keeps about one core busy), then, once all three passed, every vitest test.
// Run through npm, which puts node_modules/.bin on the PATH.
import { spawn } from 'node:child_process';

/** Runs one tool with the terminal as its output; resolves with its exit status. */
function run(command, ...args) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: 'inherit', shell: process.platform === 'win32' });
    child.on('error', (error) => {
      console.error(`npm test: cannot run ${command}: ${error.message} (run it as npm test)`);
      resolve(1);
    });
    child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

const typecheck = run(
  'tsc',
  '--noEmit',
  '--incremental',
  '--tsBuildInfoFile',
  'node_modules/.cache/petinv.tsbuildinfo',
);
// The build leaves out the library's bundled type declarations: a second TypeScript compile that no test
// reads (npm run build and npm pack make them).
const lintAndBuild = (async () =>
  (await run('biome', 'check', '.')) || (await run('tsup', '--no-dts')) || run('node', 'scripts/docs.mjs'))();
const failed = (await typecheck) || (await lintAndBuild);
process.exitCode = failed || (await run('vitest', 'run'));
