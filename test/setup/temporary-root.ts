import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The run gets a temporary directory of its own (TMPDIR, for the workers and every process they spawn),
 * so a leak is told apart from other runs on a shared machine. Each file checks its own part
 * (temporary-files.ts); whatever is still here at the end, outside any file's part, fails the run too.
 */
export default function setup() {
  const root = mkdtempSync(join(tmpdir(), 'petinv-suite-'));
  const previous = process.env.TMPDIR;
  process.env.TMPDIR = root;
  return () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    // A file that failed to load never ran its cleanup: its empty directory is not a leak of a test.
    const left = readdirSync(root).filter(
      (name) => !(name.startsWith('petinv-file-') && readdirSync(join(root, name)).length === 0),
    );
    rmSync(root, { recursive: true, force: true, maxRetries: 3 });
    if (left.length > 0) {
      process.exitCode = 1;
      throw new Error(
        `the tests left ${left.length} temporary file(s) behind (${left.slice(0, 5).join(', ')}): ` +
          'make them with temporaryDirectory() from test/helpers/serve.ts, or remove them in afterAll',
      );
    }
  };
}
