import { execFileSync } from 'node:child_process';
import { statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonBody, request } from '../helpers/http';
import { spawnServer } from '../helpers/serve';
import { mountTmpfs } from '../helpers/tmpfs';

/**
 * --quiet silences the request log, never the operator's evidence: a write that failed is logged, so the
 * client's "see the log" has something to see. A real full disk (root and tmpfs), a real process.
 */

const KEY = 'quiet-key';

const disk = mountTmpfs('size=256k');
afterAll(() => {
  if (disk) execFileSync('umount', ['-l', disk], { stdio: 'ignore' });
});

/** Fills the file system at `directory` to the last byte it will take. */
function fill(directory: string): void {
  for (let bytes = statfsSync(directory).bavail * statfsSync(directory).bsize, i = 0; bytes >= 1; i++) {
    try {
      writeFileSync(join(directory, `filler-${i}`), Buffer.alloc(bytes));
    } catch {
      bytes = Math.floor(bytes / 2);
    }
  }
}

describe.skipIf(!disk)('petinv serve --quiet on a disk that fills (root only)', () => {
  it('logs the failed write behind a 507, and no request lines', async () => {
    const data = join(disk ?? '', 'inventory.json');
    const server = await spawnServer(['--data', data, '--api-key', KEY, '--quiet']);
    try {
      fill(disk ?? '');
      let status = 200;
      // The journal may hold zeros laid down ahead of it: updates go on until they are used up.
      for (let i = 0; i < 5000 && status === 200; i++)
        status = (await request(`${server.baseUrl}/inventory/3`, jsonBody(KEY, `{"quantity":${i}}`))).status;
      expect(status).toBe(507);
      await expect.poll(() => server.stderr()).toContain('"event":"fault"');
      expect(server.stderr()).toMatch(
        /"event":"fault","method":"PATCH","path":"\/v1\/inventory\/3","fault":"[^"]*space/,
      );
      expect(server.stderr()).not.toContain('"status":');
    } finally {
      await server.stop('SIGKILL');
    }
  }, 30_000);
});
