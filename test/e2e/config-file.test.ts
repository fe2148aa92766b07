import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runPetinv, temporaryDirectory } from '../helpers/serve';

describe('the config file', () => {
  it('a corrupt file is named with its position, its content (keys) never echoed', async () => {
    const dir = temporaryDirectory();
    writeFileSync(join(dir, 'config.json'), '{"environments": {"staging": {"apiKey": sk_live_SECRET}}}', {
      mode: 0o600,
    });
    const result = await runPetinv(['env'], { env: { PETINV_CONFIG_DIR: dir } });
    expect(result.code).toBe(3);
    expect(result.stderr).toBe(
      `petinv: config file ${join(dir, 'config.json')} is not valid JSON at line 1, column 41: an unexpected character where a value should be; fix or delete it\n`,
    );
  });

  it('a directory others can write is refused with the fix', async () => {
    const dir = temporaryDirectory();
    chmodSync(dir, 0o757);
    const result = await runPetinv(['config'], { env: { PETINV_CONFIG_DIR: dir } });
    expect(result.code).toBe(3);
    expect(result.stderr).toBe(
      `petinv: config directory ${dir} can be changed by other users (mode 0757); petinv will not trust it: chmod 700 ${dir}\n`,
    );
  });

  it('keys are masked to at most four characters, and only long ones', async () => {
    const dir = temporaryDirectory();
    await runPetinv(['login', '--env', 'staging'], {
      env: { PETINV_CONFIG_DIR: dir },
      input: 'sk_live_abcdefghijkl',
    });
    await runPetinv(['login', '--env', 'local'], { env: { PETINV_CONFIG_DIR: dir }, input: 'short-key' });
    const staging = await runPetinv(['config', '--env', 'staging'], { env: { PETINV_CONFIG_DIR: dir } });
    expect(staging.stdout).toContain('API key  sk_l… (20 characters)');
    const local = await runPetinv(['config', '--env', 'local', '--json'], {
      env: { PETINV_CONFIG_DIR: dir },
    });
    expect(JSON.parse(local.stdout).apiKey.value).toBe('**** (9 characters)');
    const envs = await runPetinv(['env', '--json'], { env: { PETINV_CONFIG_DIR: dir } });
    expect(envs.stdout).not.toMatch(/sk_live|short-key/);
  });

  it('concurrent writers never lose each other’s changes', async () => {
    const dir = temporaryDirectory();
    const env = { PETINV_CONFIG_DIR: dir };
    const writers = Array.from({ length: 12 }, (_, n) =>
      n % 4 === 3
        ? runPetinv(['login', '--env', `env${n}`], { env, input: `key-${n}` })
        : runPetinv(['env', 'set-url', `env${n}`, `https://env${n}.example/v1`], { env }),
    );
    const results = await Promise.all(writers);
    expect(results.map((result) => result.code)).toEqual(Array(12).fill(0));
    const stored = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
    for (let n = 0; n < 12; n++) {
      expect(stored.environments[`env${n}`]).toEqual(
        n % 4 === 3 ? { apiKey: `key-${n}` } : { baseUrl: `https://env${n}.example/v1` },
      );
    }
  });

  it('a config directory petinv cannot write is a configuration error naming it', async () => {
    const dir = temporaryDirectory();
    writeFileSync(join(dir, 'file'), '');
    const result = await runPetinv(['env', 'set-url', 'qa', 'https://qa.example/v1'], {
      env: { PETINV_CONFIG_DIR: join(dir, 'file', 'petinv') },
    });
    expect(result.code).toBe(3);
    expect(result.stderr).toBe(
      `petinv: cannot write config directory ${join(dir, 'file', 'petinv')} (ENOTDIR)\n`,
    );
  });
});
