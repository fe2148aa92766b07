import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { removeTemporaryDirectories } from '../../scripts/serve-process.mjs';

// Each test file gets a temporary directory of its own (TMPDIR, so os.tmpdir() in the tests and in every
// process they spawn), and must leave it empty. Directories made with temporaryDirectory() are removed
// here, passed or failed; anything else still there fails the file, so a new leak is caught where it is.
// This hook is registered before the file's own, so it runs after the file's own afterAll hooks.
const outer = process.env.TMPDIR;
const own = mkdtempSync(join(tmpdir(), 'petinv-file-'));
process.env.TMPDIR = own;

afterAll(() => {
  removeTemporaryDirectories();
  if (outer === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = outer;
  const left = readdirSync(own);
  rmSync(own, { recursive: true, force: true, maxRetries: 3 });
  if (left.length > 0) {
    throw new Error(
      `this file left ${left.length} temporary file(s) behind (${left.slice(0, 5).join(', ')}): make them ` +
        'with temporaryDirectory() from test/helpers/serve.ts, or remove them in afterEach/afterAll',
    );
  }
});
