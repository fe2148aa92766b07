import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isStoreId, STORE_HEADER } from '../../src/contract/store-id';
import { runMain, serveInProcess } from '../helpers/main';
import { temporaryDirectory } from '../helpers/serve';

/** The history of write runs follows the store petinv serve says it serves, not the port it listens on. */
const KEY = 'history-store-key';

function envFor(baseUrl: string, stateHome: string): NodeJS.ProcessEnv {
  return {
    PETINV_CONFIG_DIR: temporaryDirectory(),
    XDG_STATE_HOME: stateHome,
    PETINV_ENV: 'local',
    PETINV_BASE_URL: baseUrl,
    PETINV_API_KEY: KEY,
  };
}

describe('a serve restarted on another port over the same data', () => {
  it('keeps its history and undo; an in-memory serve is a new store each start', async () => {
    const data = join(temporaryDirectory(), 'inventory.json');
    const stateHome = temporaryDirectory();
    const first = await serveInProcess(['--data', data, '--api-key', KEY]);
    const before = JSON.parse(
      (await runMain(['list', '--json'], { env: envFor(first.baseUrl, stateHome) })).stdout,
    );
    expect((await runMain(['set', '3', '333'], { env: envFor(first.baseUrl, stateHome) })).code).toBe(0);
    expect((await runMain(['adjust', '4', '+4'], { env: envFor(first.baseUrl, stateHome) })).code).toBe(0);
    const response = await fetch(`${first.baseUrl}/inventory`, {
      headers: { Authorization: `Bearer ${KEY}` },
    });
    const storeId = response.headers.get(STORE_HEADER);
    expect(isStoreId(storeId)).toBe(true);
    expect(await first.stop()).toBe(0);

    const again = await serveInProcess(['--data', data, '--api-key', KEY]);
    try {
      expect(again.port).not.toBe(first.port);
      const env = envFor(again.baseUrl, stateHome);
      const history = await runMain(['history', '--json'], { env });
      expect(JSON.parse(history.stdout).map((run: { command: string }) => run.command)).toEqual([
        'adjust 4 +4',
        'set 3 333',
      ]);
      expect(readdirSync(join(stateHome, 'petinv', 'history'))).toContain(`store-${storeId}.jsonl`);
      expect((await runMain(['undo'], { env })).code).toBe(0);
      const now = JSON.parse((await runMain(['list', '--json'], { env })).stdout);
      expect(now.find((item: { petId: number }) => item.petId === 4).quantity).toBe(before[3].quantity);
    } finally {
      await again.stop();
    }
    // With nothing answering there, history shows the store last recorded at that address.
    const offline = await runMain(['history', '--json'], { env: envFor(again.baseUrl, stateHome) });
    expect(JSON.parse(offline.stdout)).toHaveLength(3);

    const memory = await serveInProcess(['--data', data, '--in-memory', '--api-key', KEY]);
    try {
      const history = await runMain(['history', '--json'], { env: envFor(memory.baseUrl, stateHome) });
      expect(JSON.parse(history.stdout)).toEqual([]);
    } finally {
      await memory.stop();
    }
  }, 30_000);
});

describe('another data file served at the same address', () => {
  it('is the store history shows, first or after an undo that found nothing (QA)', async () => {
    const stateHome = temporaryDirectory();
    const first = await serveInProcess(['--data', join(temporaryDirectory(), 'a.json'), '--api-key', KEY]);
    const port = String(first.port);
    expect((await runMain(['set', '3', '333'], { env: envFor(first.baseUrl, stateHome) })).code).toBe(0);
    expect(await first.stop()).toBe(0);
    const other = await serveInProcess([
      '--data',
      join(temporaryDirectory(), 'b.json'),
      '--api-key',
      KEY,
      '--port',
      port,
    ]);
    try {
      const env = envFor(other.baseUrl, stateHome);
      // Without a key the service is not asked, and history says it shows the store last seen there.
      const { PETINV_API_KEY: _, ...noKey } = env;
      const unasked = await runMain(['history', '--json'], { env: noKey });
      expect(JSON.parse(unasked.stdout)).toHaveLength(1);
      expect(unasked.stderr).toContain('did not say which store it serves (no API key)');
      // A refused key is answered with the store all the same (QA: the old store's runs were shown).
      const refused = await runMain(['history', '--json'], { env: { ...env, PETINV_API_KEY: 'wrong-key' } });
      expect(JSON.parse(refused.stdout)).toEqual([]);
      expect(refused.stderr).toBe('');
      // history read the address's last store without asking, and listed a run undo could not find, when
      // it came first (QA) or after an undo that found nothing.
      expect(JSON.parse((await runMain(['history', '--json'], { env })).stdout)).toEqual([]);
      const undo = await runMain(['undo', '--dry-run'], { env });
      expect(undo.stderr).toContain('nothing to undo');
      expect(JSON.parse((await runMain(['history', '--json'], { env })).stdout)).toEqual([]);
    } finally {
      await other.stop();
    }
  }, 30_000);
});

describe('a store id the client files its history under', () => {
  it('names no other path', () => {
    expect(isStoreId('0123456789abcdef0123456789abcdef')).toBe(true);
    for (const hostile of ['../../etc', 'a/b/c/d/e/f', '', 'short', 'x'.repeat(65), 'a b c d e f g h', null])
      expect(isStoreId(hostile)).toBe(false);
  });
});
