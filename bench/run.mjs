// npm run bench: every figure is a ratio against a baseline measured in the same run.
// `npm run bench -- server` or `-- client` runs one half.
import { benchClient } from './client.mjs';
import { benchLargeInventory, benchServer } from './server.mjs';

const only = process.argv[2];
if (!only || only === 'server') {
  await benchServer();
  await benchLargeInventory();
}
if (!only || only === 'client') await benchClient();
