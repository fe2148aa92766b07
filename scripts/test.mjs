// npm test: the build, then every vitest test, with the typecheck and the lint running beside them. The
// tests need the build; nothing needs the typecheck (about 2 s of one core, more when cold) or the lint,
// and vitest's first second leaves a core idle for them. Their output is held and printed after the tests,
// where it does not break into vitest's; either failing fails npm test.
// Run through npm, which puts node_modules/.bin on the PATH.
import { spawn } from 'node:child_process';

const colour = process.stdout.isTTY && !('NO_COLOR' in process.env);

/** Runs one tool; resolves with its exit status and, when `held`, its output rather than showing it. */
function run(command, args, { held = false } = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      stdio: held ? ['ignore', 'pipe', 'pipe'] : 'inherit',
      shell: process.platform === 'win32',
    });
    const output = [];
    if (held)
      for (const stream of [child.stdout, child.stderr]) stream.on('data', (chunk) => output.push(chunk));
    child.on('error', (error) => {
      const message = `npm test: cannot run ${command}: ${error.message} (run it as npm test)\n`;
      if (held) output.push(Buffer.from(message));
      else process.stderr.write(message);
      resolve({ code: 1, output: Buffer.concat(output) });
    });
    child.on('close', (code, signal) =>
      resolve({ code: code ?? (signal ? 1 : 0), output: Buffer.concat(output) }),
    );
  });
}

// The typecheck is TypeScript 7's native compiler (the typescript-7 alias): a fifth of the CPU of
// TypeScript 5.9's, which stays only because tsup builds the bundled declarations with its JavaScript API.
// Both install a `tsc` command, so this one is run by its path.
const typescript7 = 'node_modules/typescript-7/bin/tsc';

const checks = [
  {
    name: 'the typecheck (tsc)',
    result: run(
      process.execPath,
      [
        typescript7,
        '--noEmit',
        '--incremental',
        '--tsBuildInfoFile',
        'node_modules/.cache/petinv.tsbuildinfo',
        ...(colour ? ['--pretty'] : []),
      ],
      { held: true },
    ),
  },
  {
    name: 'the lint and format check (biome)',
    result: run('biome', ['check', ...(colour ? ['--colors=force'] : []), '.'], { held: true }),
  },
];
// The build leaves out the library's bundled type declarations: a second TypeScript compile that no test
// reads (npm run build and npm pack make them).
const build = (await run('tsup', ['--no-dts'])).code || (await run('node', ['scripts/docs.mjs'])).code;
let failed = build || (await run('vitest', ['run'])).code;
for (const { name, result } of checks) {
  const { code, output } = await result;
  process.stdout.write(output);
  if (code) process.stderr.write(`npm test: ${name} failed\n`);
  failed ||= code;
}
process.exitCode = failed;
