#!/usr/bin/env node
import { createRequire } from 'node:module';

// The CLI is one CommonJS file (see tsup.config.ts), required rather than imported: no ES module facade
// over it, and its built-ins load only when a module that needs them runs.
const require = createRequire(import.meta.url);
let cli;
try {
  cli = require('../dist/cli.cjs');
} catch (error) {
  // A clone that was never built has no dist/: say how to build it rather than print a resolution stack.
  if (error?.code !== 'MODULE_NOT_FOUND' || !String(error.message).includes('dist/cli.cjs')) throw error;
}

if (cli) process.exitCode = await cli.main(process.argv, cli.processIo());
else {
  const root = new URL('..', import.meta.url).pathname;
  process.stderr.write(`petinv: not built yet; run: cd ${root} && npm install && npm run build\n`);
  process.exitCode = 1;
}
