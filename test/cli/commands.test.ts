import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdjust } from '../../src/commands/adjust';
import { runConfigShow } from '../../src/commands/config';
import { runList } from '../../src/commands/list';
import { runLogin } from '../../src/commands/login';
import { runSet } from '../../src/commands/set';
import { readConfigFile } from '../../src/config/file';
import { PetinvError } from '../../src/errors';
import { type RunningServer, startInventoryServer } from '../../src/server/start';
import { fakeContext } from '../helpers/context';
import { temporaryDirectory } from '../helpers/serve';

const KEY = 'commands-key';
let server: RunningServer;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  server = await startInventoryServer({ port: 0, apiKeys: [KEY], seed: 12 });
  env = {
    PETINV_CONFIG_DIR: temporaryDirectory(),
    PETINV_BASE_URL: server.baseUrl,
    PETINV_API_KEY: KEY,
    PETINV_ENV: 'local',
  };
});
afterAll(() => server.close());

describe('list: terminal versus pipe', () => {
  it('prints a table with a footer on a terminal, right-aligned numbers', async () => {
    const context = fakeContext({ env, tty: true });
    await runList({ limit: '3' }, context);
    expect(context.out()).toBe(
      [
        'PET ID  STATUS     QUANTITY',
        '     1  available        12',
        '     2  pending          24',
        '     3  sold             11',
        '3 pets · 47 units · local',
        '',
      ].join('\n'),
    );
  });

  it('colours the status on a terminal only when colour is wanted', async () => {
    const coloured = fakeContext({ env, tty: true, color: true });
    await runList({ limit: '1' }, coloured);
    expect(coloured.out()).toContain('\u001b[32mavailable\u001b[39m');
    const plain = fakeContext({ env, tty: true, color: false });
    await runList({ limit: '1' }, plain);
    expect(plain.out()).not.toContain('\u001b[');
  });

  it('prints tab-separated lines without decoration in a pipe', async () => {
    const context = fakeContext({ env, tty: false, color: false });
    await runList({ limit: '2' }, context);
    expect(context.out()).toBe('1\tavailable\t12\n2\tpending\t24\n');
  });
});

describe('confirmation on production', () => {
  const production = () => ({ ...env, PETINV_ENV: 'production' });

  it('asks on a terminal and changes nothing when declined (exit 10)', async () => {
    const context = fakeContext({ env: production(), stdinTty: true, stdin: 'n\n' });
    const error = await runSet('4', '99', {}, context).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PetinvError);
    expect((error as PetinvError).exitCode).toBe(10);
    expect(context.err()).toContain('Set pet 4 to 99 in production? [y/N]');
    const list = fakeContext({ env });
    await runList({}, list);
    expect(list.out()).toContain('4\tavailable\t23\n');
  });

  it('goes ahead on yes', async () => {
    const context = fakeContext({ env: production(), stdinTty: true, stdin: 'y\n' });
    await runAdjust('4', '+1', {}, context);
    expect(context.out()).toBe('4: 23 → 24\n');
  });

  it('does not ask with --yes, nor without a terminal', async () => {
    const withYes = fakeContext({ env: production(), stdinTty: true, stdin: '' });
    await runSet('4', '23', { yes: true }, withYes);
    expect(withYes.err()).toBe('');
    const piped = fakeContext({ env: production(), stdinTty: false });
    await runSet('4', '23', {}, piped);
    expect(piped.err()).toBe('');
  });
});

describe('bulk set on a terminal', () => {
  it('draws a progress bar on stderr and ends with a summary', async () => {
    const context = fakeContext({ env, tty: true, stdin: '7 1\n8 2\n9 3\n' });
    await runSet('-', undefined, {}, context);
    expect(context.err()).toContain(`\r[${'#'.repeat(24)}] 3/3\u001b[K\n`);
    expect(context.err()).toMatch(
      /petinv: updated 3 of 3 pets in local in [\d.]+s; 0 failed, 0 lines skipped\n$/,
    );
    expect(context.out()).toBe('');
  });
});

describe('login and config', () => {
  it('stores the key read from stdin in a file only its owner can read', async () => {
    const configDir = join(temporaryDirectory(), 'nested');
    const context = fakeContext({ env: { PETINV_CONFIG_DIR: configDir }, stdin: 'sk_live_1234567890\n' });
    await runLogin({ env: 'staging' }, context);
    expect(readConfigFile({ PETINV_CONFIG_DIR: configDir }).environments.staging?.apiKey).toBe(
      'sk_live_1234567890',
    );
    expect(statSync(join(configDir, 'config.json')).mode & 0o777).toBe(0o600);
    expect(statSync(configDir).mode & 0o777).toBe(0o700);
    expect(context.err()).toContain('the API key sk_l… (18 characters) for staging');
    expect(context.err()).not.toContain('sk_live_1234567890');
  });

  it('reads the key hidden from a terminal', async () => {
    const configDir = temporaryDirectory();
    const context = fakeContext({
      env: { PETINV_CONFIG_DIR: configDir },
      stdinTty: true,
      stdin: 'typed-key\r',
    });
    await runLogin({ env: 'local' }, context);
    expect(readConfigFile({ PETINV_CONFIG_DIR: configDir }).environments.local?.apiKey).toBe('typed-key');
    expect(context.err()).toContain('API key for local (input hidden): \n');
  });

  it('shows where each setting came from, key masked', () => {
    const context = fakeContext({ env: { ...env, PETINV_API_KEY: 'abcdefghijkl' }, json: true });
    runConfigShow({}, context);
    const shown = JSON.parse(context.out());
    expect(shown.env).toEqual({ value: 'local', source: 'environment variable', from: 'PETINV_ENV' });
    expect(shown.baseUrl).toEqual({
      value: server.baseUrl,
      source: 'environment variable',
      from: 'PETINV_BASE_URL',
    });
    expect(shown.apiKey.value).toBe('**** (12 characters)');
  });
});
