import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMain } from '../helpers/main';
import { temporaryDirectory } from '../helpers/serve';

/**
 * A service holding pets 1 to 4 that answers a PATCH of pet 2 with another quantity, and of pet 3 by
 * dropping the first attempt's connection once the request arrived and refusing the key (401) to the
 * retry: neither may be called "not applied" in a run's summary.
 */
const stock = new Map([
  [1, 10],
  [2, 20],
  [3, 30],
  [4, 40],
]);
let dropped = false;
const server = createServer((request, response) => {
  let body = '';
  request.on('data', (chunk) => {
    body += chunk;
  });
  request.on('end', () => {
    const answer = (status: number, text: string) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(text);
    };
    if (request.method === 'GET')
      return answer(
        200,
        JSON.stringify([...stock].map(([petId, quantity]) => ({ petId, quantity, status: 'available' }))),
      );
    const petId = Number(request.url?.split('/').at(-1));
    const { quantity } = JSON.parse(body) as { quantity: number };
    if (petId === 3 && !dropped) {
      dropped = true;
      stock.set(3, quantity);
      request.socket.destroy();
      return;
    }
    if (petId === 3) return answer(401, '{"code":"unauthorized","message":"key revoked","status":401}');
    stock.set(petId, petId === 2 ? quantity + 1 : quantity);
    answer(200, JSON.stringify({ petId, quantity: stock.get(petId), status: 'available' }));
  });
});
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  env = {
    PETINV_CONFIG_DIR: temporaryDirectory(),
    XDG_STATE_HOME: temporaryDirectory(),
    PETINV_ENV: 'staging',
    PETINV_BASE_URL: `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`,
    PETINV_API_KEY: 'outcomes-key',
  };
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

describe('what a finished run says was not applied, and what may have been', () => {
  it('a mismatch is neither; a retry refused the key after a lost attempt may have been applied', async () => {
    const result = await runMain(
      ['--json', 'set', '-', '--concurrency', '1', '--pipelining', '1', '--retries', '1'],
      { env, input: '1 11\n2 21\n3 31\n4 41\n' },
    );
    const failure = JSON.parse(result.stderr.trim().split('\n').at(-1) as string);
    expect(failure.summary).toMatchObject({ updated: 2, mismatched: 1, unknown: 1 });
    expect(failure.summary.notApplied).toEqual([]);
    expect(failure.summary.maybeApplied).toEqual([{ input: 3, petId: 3 }]);
    const results = JSON.parse(result.stdout) as { input: number; maybeApplied?: boolean }[];
    expect(results.filter((row) => row.maybeApplied).map((row) => row.input)).toEqual([3]);
    expect(stock.get(3)).toBe(31);
  });
});
