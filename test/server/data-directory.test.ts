import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnReadyServer } from '../../scripts/serve-process.mjs';
import { cleanEnv, PETINV_BIN, temporaryDirectory } from '../helpers/serve';

/**
 * The data directory `petinv serve` creates by default is the user's alone (0700), whatever the umask the
 * process started with; a relative XDG_DATA_HOME is ignored, as the XDG specification says (issue 21).
 */
const withUmask = (mask: number) =>
  `data:text/javascript,${encodeURIComponent(`process.umask(0o${mask.toString(8)});`)}`;

async function serveDefault(umask: number, env: NodeJS.ProcessEnv) {
  const started = await spawnReadyServer(
    ['--import', withUmask(umask), PETINV_BIN, 'serve', '--json', '--port', '0', '--seed', '2'],
    {
      env: {
        ...Object.fromEntries(Object.entries(cleanEnv()).filter(([name]) => !name.startsWith('XDG_'))),
        PETINV_CONFIG_DIR: temporaryDirectory(),
        ...env,
      },
    },
  );
  started.child.kill('SIGTERM');
  await started.exited;
  return started.ready;
}

describe('the default data directory', () => {
  it.each([0o000, 0o022, 0o002, 0o077])('is 0700 under umask %o, its missing parents too', async (umask) => {
    const home = temporaryDirectory();
    const ready = await serveDefault(umask, { HOME: home });
    const directory = join(home, '.local', 'share', 'petinv');
    expect(ready.dataFile).toBe(join(directory, 'inventory.json'));
    expect(statSync(directory).mode & 0o777).toBe(0o700);
    expect(statSync(join(home, '.local', 'share')).mode & 0o777).toBe(0o700);
  });

  it('under XDG_DATA_HOME when it is absolute; a relative one is ignored', async () => {
    const home = temporaryDirectory();
    const data = temporaryDirectory();
    const absolute = await serveDefault(0o022, { HOME: home, XDG_DATA_HOME: data });
    expect(absolute.dataFile).toBe(join(data, 'petinv', 'inventory.json'));
    expect(statSync(join(data, 'petinv')).mode & 0o777).toBe(0o700);
    const relative = await serveDefault(0o022, { HOME: home, XDG_DATA_HOME: 'relative/data' });
    expect(relative.dataFile).toBe(join(home, '.local', 'share', 'petinv', 'inventory.json'));
    expect(existsSync(join(process.cwd(), 'relative'))).toBe(false);
  });
});
