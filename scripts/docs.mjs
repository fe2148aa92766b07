// The documents made from petinv's help text, after tsup has built dist/ (npm run build runs this):
//   node scripts/docs.mjs            writes man/petinv.1
//   node scripts/docs.mjs --readme   also rewrites the README's help-topic sections (npm run docs)
//   node scripts/docs.mjs --check    exits 1 when those README sections differ from src/help/topics.ts
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderManPage, syncReadme } from '../dist/help/manual.js';

const root = join(import.meta.dirname, '..');
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
mkdirSync(join(root, 'man'), { recursive: true });
writeFileSync(join(root, 'man', 'petinv.1'), renderManPage(version));

const check = process.argv.includes('--check');
if (check || process.argv.includes('--readme')) {
  const readmePath = join(root, 'README.md');
  const readme = readFileSync(readmePath, 'utf8');
  const synced = syncReadme(readme);
  if (check && synced !== readme) {
    console.error('README.md: the help-topic sections differ from src/help/topics.ts; run npm run docs');
    process.exitCode = 1;
  } else if (!check && synced !== readme) writeFileSync(readmePath, synced);
}
