// The documents made from petinv's help text, after tsup has built dist/ (npm run build runs this):
//   node scripts/docs.mjs           writes man/petinv.1
//   node scripts/docs.mjs --docs    also rewrites the generated sections of README.md and docs/ (npm run docs)
//   node scripts/docs.mjs --check   exits 1 when those sections differ from src/help/
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GENERATED_PAGES, renderManPage, syncDocument } from '../dist/help/manual.js';

const root = join(import.meta.dirname, '..');
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
mkdirSync(join(root, 'man'), { recursive: true });
writeFileSync(join(root, 'man', 'petinv.1'), renderManPage(version));

const check = process.argv.includes('--check');
if (check || process.argv.includes('--docs')) {
  for (const page of GENERATED_PAGES) {
    const path = join(root, page);
    const text = readFileSync(path, 'utf8');
    const synced = syncDocument(page, text);
    if (synced === text) continue;
    if (check) {
      console.error(`${page}: the generated sections differ from src/help/; run npm run docs`);
      process.exitCode = 1;
    } else writeFileSync(path, synced);
  }
}
