import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runPetinv, temporaryDirectory } from '../helpers/serve';

describe('the config file', () => {
  it('concurrent writers never lose each other’s changes', async () => {
    const dir = temporaryDirectory();
    const env = { PETINV_CONFIG_DIR: dir };
    const writers = Array.from({ length: 12 }, (_, n) =>
      n % 4 === 3
        ? runPetinv(['login', '--create', '--env', `env${n}`], { env, input: `key-${n}` })
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
});
