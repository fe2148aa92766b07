import { Agent } from 'undici';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/client';
import { undiciTransport } from '../../src/client/undici-transport';
import { PetinvError } from '../../src/errors';
import { type RawRequest, rawAnswer, useRawServer } from '../helpers/lying-server';
import { closedPort } from '../helpers/serve';

/**
 * The client's side of issue 21, over the transport the CLI runs, against a raw server that answers each
 * request as the test's script says: a reset once the request is in leaves a write's outcome unknown.
 */

let script: ((request: RawRequest) => void)[] = [];
const service = useRawServer((request) => script.shift()?.(request));
const agent = new Agent();
afterAll(() => agent.close());
afterEach(() => expect(script).toHaveLength(0));

const reset = ({ socket }: RawRequest) => socket.resetAndDestroy();
const reply =
  (status: number, body: object | string = '', extra = '') =>
  ({ socket }: RawRequest) =>
    rawAnswer(socket, status, typeof body === 'string' ? body : JSON.stringify(body), extra);

function makeClient(retries = 2, baseUrl = `${service.origin}/v1`) {
  const warnings: string[] = [];
  const client = createClient({
    baseUrl,
    apiKey: 'truth-key',
    transport: undiciTransport(agent),
    envName: 'staging',
    retries,
    sleep: async () => {},
    random: () => 0.5,
    onWarning: (message) => warnings.push(message),
  });
  return { client, warnings };
}

async function failure(promise: Promise<unknown>): Promise<PetinvError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(PetinvError);
  return error as PetinvError;
}

const item = (petId: number, quantity: number) => ({ petId, quantity, status: 'sold' });

describe('updateInventory', () => {
  it('a 200 with another quantity is a mismatch (exit 12), with both numbers', async () => {
    script = [reply(200, item(5, 70))];
    const error = await failure(makeClient().client.updateInventory(5n, 7));
    expect(error.exitCode).toBe(12);
    expect(error.body).toMatchObject({ code: 'mismatch', status: 200 });
    expect(error.message).toContain(
      'was sent quantity 7, but the service answered PATCH /inventory/5 (200) with quantity 70',
    );
  });

  it('a reset after sending, then a success: the item, and a warning that the first may have been applied', async () => {
    script = [reset, reply(200, item(5, 7))];
    const { client, warnings } = makeClient();
    expect(await client.updateInventory(5n, 7)).toEqual({ petId: 5n, quantity: 7, status: 'sold' });
    expect(warnings).toEqual([
      'pet 5 in staging: an earlier attempt of PATCH /inventory/5 was sent and got no answer (ECONNRESET), so it may have been applied; a retry with the same quantity then succeeded, and a quantity is absolute, so pet 5 holds 7 once, not twice',
    ]);
  });

  describe('at a petinv serve (conditional writes)', () => {
    const store = 'Petinv-Store: store-abcdefgh\r\n';
    const changed = (holds: number) =>
      reply(
        412,
        { code: 'quantity_changed', message: 'changed', status: 412 },
        `Petinv-Quantity: ${holds}\r\n`,
      );
    const list = (...items: object[]) => reply(200, items, store);

    it('a lost attempt, then a 412 naming the quantity sent, then a read that agrees: the item, and a warning (QA: exit 8)', async () => {
      script = [list(item(5, 3)), reset, changed(7), list(item(5, 7), item(6, 1))];
      const { client, warnings } = makeClient();
      await client.listInventory();
      expect(await client.updateInventory(5n, 7, 3)).toEqual({ petId: 5n, quantity: 7, status: 'sold' });
      expect(warnings).toEqual([
        "pet 5 in staging: an earlier attempt of PATCH /inventory/5 was sent and got no answer (ECONNRESET), so it may have been applied; the retry found pet 5 holding 7 already (that attempt's doing, or a colleague's), and a read confirms it",
      ]);
    });

    it('a lost attempt, then a 412 naming another quantity, or one the read does not confirm: still unknown', async () => {
      for (const [answer, read] of [
        [changed(8), undefined],
        [changed(7), list(item(5, 9))],
        [changed(7), reply(500, { code: 'x', message: 'down', status: 500 })],
      ] as const) {
        script = [list(item(5, 3)), reset, answer, ...(read ? [read, read, read] : [])];
        const { client, warnings } = makeClient();
        await client.listInventory();
        const error = await failure(client.updateInventory(5n, 7, 3));
        expect(error.body.code).toBe('outcome_unknown');
        expect(error.message).toContain('(then answered 412 to attempt 2)');
        expect(warnings).toEqual([]);
        script = [];
      }
    });
  });

  it('resets on every attempt: outcome unknown (exit 8), never "cannot reach"', async () => {
    script = [reset, reset, reset];
    const error = await failure(makeClient().client.updateInventory(5n, 7));
    expect(error.exitCode).toBe(8);
    expect(error.body.code).toBe('outcome_unknown');
    expect(error.message).toBe(
      'outcome unknown: PATCH /inventory/5 was sent to staging and the connection broke before an answer came (ECONNRESET) after 3 attempts; the update may have been applied; setting the same quantity again cannot apply it twice: petinv set 5 7 --env staging',
    );
  });

  it('a write on a condition (a sheet’s expected) is told to be read back, not set again blind (QA)', async () => {
    // `petinv set 5 7` after a colleague's sale would write over it: the sheet's from is what guards it.
    script = [reset, reset, reset];
    const error = await failure(makeClient().client.updateInventory(5n, 7, 3));
    expect(error.body.code).toBe('outcome_unknown');
    expect(error.message).toMatch(
      /may have been applied; read it back before writing it again \(7 if it was applied, 3 if not, unless someone changed it since\): petinv get 5 --env staging$/,
    );
  });

  it('a lost attempt, then a 503 on every retry: still unknown', async () => {
    const down = reply(503, { code: 'down', message: 'down', status: 503 });
    script = [reset, down, down];
    const error = await failure(makeClient().client.updateInventory(5n, 7));
    expect(error.body.code).toBe('outcome_unknown');
    expect(error.message).toContain('(then answered 503 to attempt 3)');
  });

  it('a lost attempt, then a 400: the service refuses the request itself, as it would have the first', async () => {
    script = [reset, reply(400, { code: 'bad', message: 'no', status: 400 })];
    const error = await failure(makeClient().client.updateInventory(5n, 7));
    expect(error.exitCode).toBe(6);
  });

  it('a lost attempt, then a 409: the conflict may be with what the first one did, so still unknown', async () => {
    script = [reset, reply(409, { code: 'conflict', message: 'busy', status: 409 })];
    const error = await failure(makeClient().client.updateInventory(5n, 7));
    expect(error.exitCode).toBe(8);
    expect(error.body.code).toBe('outcome_unknown');
    expect(error.message).toContain('(then answered 409 to attempt 2)');
  });

  it('a lost attempt, then a redirect: the first may have been applied before the answers moved, so still unknown', async () => {
    script = [reset, reply(307, '', 'Location: http://elsewhere.example/v1/inventory/5\r\n')];
    const error = await failure(makeClient().client.updateInventory(5n, 7));
    expect(error.exitCode).toBe(8);
    expect(error.body.code).toBe('outcome_unknown');
    expect(error.message).toContain('(then answered 307 to attempt 2)');
  });

  it('a lost attempt, then no such pet: refused as the first would have been; a refused key proves nothing', async () => {
    for (const [status, exitCode] of [
      // The key may have been revoked after the lost attempt was applied: the outcome stays unknown.
      [401, 8],
      [403, 8],
      [404, 5],
      [422, 6],
    ] as const) {
      script = [reset, reply(status, { code: 'no', message: 'no', status })];
      const error = await failure(makeClient().client.updateInventory(5n, 7));
      expect(error.exitCode).toBe(exitCode);
    }
  });

  it('a connection refused sent nothing: "cannot reach" (exit 7)', async () => {
    const error = await failure(
      makeClient(0, `http://127.0.0.1:${await closedPort()}/v1`).client.updateInventory(5n, 7),
    );
    expect(error.exitCode).toBe(7);
    expect(error.message).toContain('cannot reach');
  });

  it('a GET whose connection breaks is not a write: its failure is as before', async () => {
    script = [reset];
    const error = await failure(makeClient(0).client.listInventory());
    expect(error.exitCode).toBe(7);
    expect(error.body.code).toBe('network');
  });
});

describe('a list that names one pet twice', () => {
  const twice = [item(1, 1), item(2, 2), item(3, 3), item(2, 4)];

  it('listInventory refuses it, naming the pet and both positions', async () => {
    script = [reply(200, twice)];
    const error = await failure(makeClient().client.listInventory());
    expect(error.exitCode).toBe(8);
    expect(error.body.code).toBe('invalid_response');
    expect(error.message).toBe(
      'the answer from staging to GET /inventory does not match the contract: pet 2 is listed twice, as items 1 and 3 (counted from 0), so its stock is not known',
    );
  });

  it('findInventoryItem refuses it for that pet, and reads any other', async () => {
    script = [reply(200, twice), reply(200, twice), reply(200, twice)];
    const { client } = makeClient();
    expect((await failure(client.findInventoryItem(2n))).message).toContain(
      'pet 2 is listed twice, as items 1 and 3',
    );
    expect(await client.findInventoryItem(3n)).toEqual({ petId: 3n, quantity: 3, status: 'sold' });
    expect(await client.findInventoryItem(9n)).toBeUndefined();
  });

  it('pollInventory refuses it too', async () => {
    script = [reply(200, twice)];
    expect((await failure(makeClient().client.pollInventory(undefined))).message).toContain(
      'pet 2 is listed twice',
    );
  });
});
