// npm run bench: every figure is a ratio against a baseline measured in the same run.
// `npm run bench -- server` or `-- client` runs one half; `-- list` only the million-pet list; `-- replay`
// only the crash replay; `-- ceiling` (not part of the whole bench) what a durable PATCH can reach here
// whatever petinv does.
import { benchDurableCeiling } from './ceiling.mjs';
import { benchClient, benchList } from './client.mjs';
import { benchCrashReplay, benchLargeInventory, benchServer, bottlenecks } from './server.mjs';

const only = process.argv[2];
if (!only || only === 'server') {
  await benchServer();
  await benchLargeInventory();
  await benchCrashReplay();
}
if (!only || only === 'client') await benchClient();
if (!only || only === 'client' || only === 'list') await benchList();
if (only === 'ceiling') await benchDurableCeiling();
if (only === 'replay') await benchCrashReplay();

if (bottlenecks.length > 0) {
  console.error(`\nThe load generator was the bottleneck, so these figures measure it rather than petinv:`);
  for (const line of bottlenecks) console.error(`  ${line}`);
  process.exitCode = 1;
}
