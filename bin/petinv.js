#!/usr/bin/env node
// A clone that was never built has no dist/: say how to build it rather than print a resolution stack.
const cli = await import('../dist/cli.js').catch((error) => {
  if (error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.url).endsWith('/dist/cli.js')) return undefined;
  throw error;
});

if (cli) process.exitCode = await cli.main(process.argv, cli.processIo());
else {
  const root = new URL('..', import.meta.url).pathname;
  process.stderr.write(`petinv: not built yet; run: cd ${root} && npm install && npm run build\n`);
  process.exitCode = 1;
}
