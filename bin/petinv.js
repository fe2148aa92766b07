#!/usr/bin/env node
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

// The CLI is one CommonJS file (see tsup.config.ts), loaded by dist/launch.cjs with the code V8 compiled
// for it last time (see src/launch.ts).
const require = createRequire(import.meta.url);
let launcher;
try {
  launcher = require('../dist/launch.cjs');
} catch (error) {
  // A clone that was never built has no dist/: say how to build it rather than print a resolution stack.
  if (error?.code !== 'MODULE_NOT_FOUND' || !String(error.message).includes('dist/launch.cjs')) throw error;
}

if (launcher) {
  const { cli, keepCompiledCode } = launcher.loadCli(
    fileURLToPath(new URL('../dist/cli.cjs', import.meta.url)),
  );
  process.exitCode = await cli.main(process.argv, cli.processIo());
  keepCompiledCode();
} else {
  const root = fileURLToPath(new URL('..', import.meta.url));
  process.stderr.write(`petinv: not built yet; run: cd ${root} && npm install && npm run build\n`);
  process.exitCode = 1;
}
