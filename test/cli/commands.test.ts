import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readConfigFile } from '../../src/config/file';
import { useInventoryServer } from '../helpers/inventory-server';
import { runMain } from '../helpers/main';
import { temporaryDirectory } from '../helpers/serve';

const KEY = 'commands-key';
const served = useInventoryServer(KEY);

describe('list: terminal versus pipe', () => {
  it('prints a table with a footer on a terminal, right-aligned numbers', async () => {
    const result = await runMain(['list', '--limit', '3', '--no-color'], { env: served.env, tty: true });
    expect(result.stdout).toBe(
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
    const coloured = await runMain(['list', '--limit', '1'], { env: served.env, tty: true });
    expect(coloured.stdout).toContain('\u001b[32mavailable\u001b[39m');
    const plain = await runMain(['list', '--limit', '1', '--no-color'], { env: served.env, tty: true });
    expect(plain.stdout).not.toContain('\u001b[');
  });

  it('prints tab-separated lines without decoration in a pipe', async () => {
    const result = await runMain(['list', '--limit', '2'], { env: served.env });
    expect(result.stdout).toBe('1\tavailable\t12\n2\tpending\t24\n');
  });
});

describe('confirmation on production', () => {
  const production = () => ({ ...served.env, PETINV_ENV: 'production' });

  it('asks on a terminal and changes nothing when declined (exit 10)', async () => {
    const declined = await runMain(['set', '4', '99'], { env: production(), stdinTty: true, input: 'n\n' });
    expect(declined.code).toBe(10);
    expect(declined.stderr).toContain('Set pet 4 to 99 in production? [y/N]');
    expect((await runMain(['list'], { env: served.env })).stdout).toContain('4\tavailable\t23\n');
  });

  it('names the host and port, not production, when PETINV_BASE_URL chose the URL', async () => {
    // No PETINV_ENV and no config: the environment is production's default, the URL the variable's.
    const { PETINV_ENV: _, ...byUrl } = served.env;
    const where = new URL(served.server.baseUrl).host;
    const asked = { env: byUrl, stdinTty: true, input: 'n\n' };
    const set = await runMain(['set', '4', '99'], asked);
    expect(set.stderr).toContain(`Set pet 4 to 99 in ${where}? [y/N]`);
    const adjust = await runMain(['adjust', '4', '+1'], asked);
    expect(adjust.stderr).toContain(`Change pet 4 from 23 to 24 in ${where}? [y/N]`);
    const sheet = join(temporaryDirectory(), 'sheet.txt');
    writeFileSync(sheet, '4 98\n');
    const bulk = await runMain(['set', '--file', sheet], asked);
    expect(bulk.stderr).toContain(`Apply 1 update in ${where}? [y/N]`);
    expect(`${set.stderr}${adjust.stderr}${bulk.stderr}`).not.toContain('production');
    expect([set.code, adjust.code, bulk.code]).toEqual([10, 10, 10]);
  });

  it('goes ahead on yes', async () => {
    const result = await runMain(['adjust', '4', '+1'], { env: production(), stdinTty: true, input: 'y\n' });
    expect(result.stdout).toBe('4\t23\t24\n');
  });

  it('does not ask with --yes, nor without a terminal', async () => {
    const withYes = await runMain(['set', '4', '23', '--yes'], { env: production(), stdinTty: true });
    expect(withYes).toMatchObject({ code: 0, stderr: '' });
    const piped = await runMain(['set', '4', '23'], { env: production() });
    expect(piped).toMatchObject({ code: 0, stderr: '' });
  });
});

describe('bulk set on a terminal', () => {
  it('draws a progress bar that fits the terminal on stderr; the summary replaces it, once', async () => {
    const result = await runMain(['set', '-'], {
      env: served.env,
      tty: true,
      columns: 40,
      input: '7 1\n8 2\n9 3\n',
    });
    const clear = '\r\u001b[K';
    const drawn = result.stderr.split(clear);
    // The first update draws the bar; the line after the last clear is the summary alone.
    expect(drawn[1]).toMatch(/^\[#+-+\] 1\/3/);
    for (const line of drawn.slice(1, -1)) expect(line.length).toBeLessThan(40);
    expect(drawn.at(-1)).toMatch(
      /^petinv: updated 3 of 3 pets in local in [\d.]+s; \d+ changed, 0 already right, 0 failed, 0 conflicts, 0 lines skipped\n$/,
    );
    expect(result.stderr.match(/updated 3 of 3/g)).toHaveLength(1);
    expect(result.stdout).toBe('');
  });

  it('says it reads updates from stdin, and how to end, when stdin is a terminal', async () => {
    const typed = await runMain(['set', '-'], { env: served.env, stdinTty: true, input: '7 1\n' });
    expect(typed.stderr).toMatch(
      /^petinv: reading updates from stdin, one "petId quantity" a line; end with Ctrl-D on a line of its own \(Ctrl-C cancels\)\npetinv: updated [01] of 1 pet/,
    );
    const piped = await runMain(['set', '-'], { env: served.env, input: '7 1\n' });
    expect(piped.stderr).not.toContain('reading updates');
  });
});

describe('login and config', () => {
  it('stores the key read from stdin in a file only its owner can read', async () => {
    const configDir = join(temporaryDirectory(), 'nested');
    const result = await runMain(['login', '--env', 'staging', '--create'], {
      env: { PETINV_CONFIG_DIR: configDir },
      input: 'sk_live_1234567890\n',
    });
    expect(readConfigFile({ PETINV_CONFIG_DIR: configDir }).environments.staging?.apiKey).toBe(
      'sk_live_1234567890',
    );
    expect(statSync(join(configDir, 'config.json')).mode & 0o777).toBe(0o600);
    expect(statSync(configDir).mode & 0o777).toBe(0o700);
    expect(result.stderr).toContain('the API key sk_l… (18 characters) for staging');
    expect(result.stderr).not.toContain('sk_live_1234567890');
  });

  it('reads the key hidden from a terminal', async () => {
    const configDir = temporaryDirectory();
    const result = await runMain(['login', '--env', 'local', '--no-verify'], {
      env: { PETINV_CONFIG_DIR: configDir },
      stdinTty: true,
      input: 'typed-key\r',
    });
    expect(readConfigFile({ PETINV_CONFIG_DIR: configDir }).environments.local?.apiKey).toBe('typed-key');
    expect(result.stderr).toContain('API key for local (input hidden): \n');
  });

  it('shows where each setting came from, key masked', async () => {
    const result = await runMain(['--json', 'config'], {
      env: { ...served.env, PETINV_API_KEY: 'abcdefghijkl' },
    });
    const shown = JSON.parse(result.stdout);
    expect(shown.env).toEqual({ value: 'local', source: 'environment variable', from: 'PETINV_ENV' });
    expect(shown.baseUrl).toEqual({
      value: served.server.baseUrl,
      source: 'environment variable',
      from: 'PETINV_BASE_URL',
    });
    expect(shown.apiKey.value).toBe('**** (12 characters)');
  });
});
