#!/usr/bin/env node
'use strict';
// CommonJS, as the CLI it loads: an ES module entry would start Node's ES module loader first, about
// 4 ms of every cold start. dist/launch.cjs loads dist/cli.cjs with the code V8 compiled for it last
// time (see src/launch.ts).
const { join } = require('node:path');

let launcher;
try {
  launcher = require('../dist/launch.cjs');
} catch (error) {
  // A clone that was never built has no dist/: say how to build it rather than print a resolution stack.
  if (error?.code !== 'MODULE_NOT_FOUND' || !String(error.message).includes('dist/launch.cjs')) throw error;
}

if (launcher) {
  const { cli, keepCompiledCode } = launcher.loadCli(join(__dirname, '..', 'dist', 'cli.cjs'));
  cli.main(process.argv, cli.processIo()).then((code) => {
    process.exitCode = code;
    // Only a run that succeeded keeps its code: V8 keeps what the run compiled, and a first `petinv list`
    // before any service was up would otherwise leave the failure's code for every list after it.
    if (code === 0) keepCompiledCode();
  });
} else {
  process.stderr.write(
    `petinv: not built yet; run: cd ${join(__dirname, '..')}/ && npm ci && npm run build\n`,
  );
  process.exitCode = 1;
}
