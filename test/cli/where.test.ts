import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMain, type ServedInProcess, serveInProcess } from '../helpers/main';
import { temporaryDirectory } from '../helpers/serve';

/**
 * Messages name where a command read or wrote: the environment's name when it chose the URL, the URL's
 * host and port when --base-url or PETINV_BASE_URL did. A newcomer with a serve running and nothing set
 * up is told how to use it.
 */

const KEY = 'where-test-key';
let served: ServedInProcess;
let configDir: string;
let hostPort: string;

beforeAll(async () => {
  configDir = temporaryDirectory('petinv-where-');
  served = await serveInProcess(['--in-memory', '--api-key', KEY], { PETINV_CONFIG_DIR: configDir });
  hostPort = new URL(served.baseUrl).host;
});
afterAll(async () => {
  await served.stop();
});

/** A fresh configuration: no environment has a URL, and no serve is registered in it. */
const freshConfig = () => ({ PETINV_CONFIG_DIR: temporaryDirectory('petinv-where-config-') });

describe('where a message says petinv read or wrote', () => {
  it('the URL (host and port) when PETINV_BASE_URL chose it, never the environment it overrode', async () => {
    const env = { ...freshConfig(), PETINV_BASE_URL: served.baseUrl, PETINV_API_KEY: KEY };
    const bulk = await runMain(['set', '-'], { env, input: '1 5\n2 6\n' });
    expect(bulk.code).toBe(0);
    expect(bulk.stderr).toMatch(new RegExp(`^petinv: updated 2 of 2 pets in ${hostPort} in `));
    expect(bulk.stderr).not.toContain('production');
    const missing = await runMain(['get', '424242'], { env });
    expect(missing.code).toBe(5);
    expect(missing.stderr).toBe(`petinv: pet 424242 not found in ${hostPort} (it is not in the inventory)\n`);
    const dryRun = await runMain(['set', '-', '--dry-run'], { env, input: '1 7\n' });
    expect(dryRun.stderr).toContain(`against ${hostPort}`);
  });

  it('the URL when --base-url chose it, in the table footer too', async () => {
    const env = { ...freshConfig(), PETINV_API_KEY: KEY };
    const list = await runMain(['--base-url', served.baseUrl, 'list', '--table', '--limit', '1'], { env });
    expect(list.code).toBe(0);
    expect(list.stdout.trimEnd().split('\n').at(-1)).toMatch(new RegExp(`· ${hostPort}$`));
    const summary = await runMain(['--base-url', served.baseUrl, 'summary'], { env });
    expect(summary.stdout.split('\n')[0]).toMatch(new RegExp(`· ${hostPort}$`));
  });

  it('the environment named for the command (--env, PETINV_ENV), the URL being given as its', async () => {
    const env = {
      ...freshConfig(),
      PETINV_ENV: 'staging',
      PETINV_BASE_URL: served.baseUrl,
      PETINV_API_KEY: KEY,
    };
    const bulk = await runMain(['set', '-'], { env, input: '1 4001\n' });
    expect(bulk.stderr).toMatch(/^petinv: updated 1 of 1 pet in staging in /);
  });

  it("the environment's name when it chose the URL", async () => {
    const env = { PETINV_CONFIG_DIR: configDir };
    const bulk = await runMain(['--env', 'local', 'set', '-'], { env, input: '1 4002\n' });
    expect(bulk.code).toBe(0);
    expect(bulk.stderr).toMatch(/^petinv: updated 1 of 1 pet in local in /);
  });

  it('with no URL configured and a serve running, the error says how to use it', async () => {
    const result = await runMain(['list'], { env: { PETINV_CONFIG_DIR: configDir } });
    expect(result.code).toBe(3);
    expect(result.stderr).toBe(
      `petinv: no base URL for production; petinv serve is running at ${served.baseUrl}: use it with --env local, or petinv env use local; or set a URL: petinv env set-url production https://<host>/v1\n`,
    );
    // With no serve running, only how to set a URL.
    const none = await runMain(['list'], { env: freshConfig() });
    expect(none.stderr).toBe(
      'petinv: no base URL for production; set one: petinv env set-url production https://<host>/v1\n',
    );
  });

  it('no key for the URL PETINV_BASE_URL or --base-url gave: the address named, and the serve running there', async () => {
    // A key petinv login stores goes only to its environment's own URL: logging in would not help here.
    const env = { PETINV_CONFIG_DIR: configDir, PETINV_BASE_URL: served.baseUrl };
    const viaVariable = await runMain(['list'], { env });
    expect(viaVariable.code).toBe(3);
    expect(viaVariable.stderr).toBe(
      `petinv: no API key for ${hostPort} (its URL from PETINV_BASE_URL); petinv serve is running there: use it with --env local, with PETINV_BASE_URL unset (local has its key), or pass its key in PETINV_API_KEY\n`,
    );
    const viaFlag = await runMain(['--base-url', served.baseUrl, 'list'], {
      env: { PETINV_CONFIG_DIR: configDir },
    });
    expect(viaFlag.stderr).toContain(
      '(its URL from --base-url); petinv serve is running there: use it with --env local, without --base-url',
    );
    // The advice holds: local reaches that serve.
    expect(
      (await runMain(['--env', 'local', 'get', '1'], { env: { PETINV_CONFIG_DIR: configDir } })).code,
    ).toBe(0);
    // Elsewhere, no serve to point to.
    const elsewhere = await runMain(['list'], {
      env: { ...freshConfig(), PETINV_BASE_URL: 'http://127.0.0.1:9/v1' },
    });
    expect(elsewhere.stderr).toBe(
      "petinv: no API key for 127.0.0.1:9 (its URL from PETINV_BASE_URL); pass that service's key in PETINV_API_KEY, or point production there and store its key: petinv env set-url production http://127.0.0.1:9/v1, then petinv login --env production\n",
    );
    expect(elsewhere.stderr).not.toContain('for production');
  });

  it('history with no URL configured and a serve running says how to use it too', async () => {
    const result = await runMain(['history'], { env: { PETINV_CONFIG_DIR: configDir } });
    expect(result.code).toBe(3);
    expect(result.stderr).toBe(
      `petinv: no base URL for production, so no history to show; petinv serve is running at ${served.baseUrl}: use it with --env local, or petinv env use local; or set a URL: petinv env set-url production https://<host>/v1\n`,
    );
    const none = await runMain(['history'], { env: freshConfig() });
    expect(none.stderr).toBe(
      'petinv: no base URL for production, so no history to show; set one: petinv env set-url production https://<host>/v1\n',
    );
  });
});
