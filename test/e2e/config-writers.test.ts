import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runPetinv, temporaryDirectory } from '../helpers/serve';

const WRITERS = 8;

describe('the config file', () => {
  it('concurrent writers never lose each other’s changes', async () => {
    const dir = temporaryDirectory();
    const env = { PETINV_CONFIG_DIR: dir };
    // Eight processes on two cores already queue at the lock; more only cost time.
    const writers = Array.from({ length: WRITERS }, (_, n) =>
      n % 4 === 3
        ? runPetinv(['login', '--create', '--env', `env${n}`], { env, input: `key-${n}` })
        : runPetinv(['env', 'set-url', `env${n}`, `https://env${n}.example/v1`], { env }),
    );
    const results = await Promise.all(writers);
    expect(results.map((result) => result.code)).toEqual(Array(WRITERS).fill(0));
    const stored = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
    for (let n = 0; n < WRITERS; n++) {
      expect(stored.environments[`env${n}`]).toEqual(
        n % 4 === 3 ? { apiKey: `key-${n}` } : { baseUrl: `https://env${n}.example/v1` },
      );
    }
  });
});
