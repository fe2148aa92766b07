import { describe, expect, it } from 'vitest';
import { createClient, retryDelayMs } from '../../src/client/client';
import type { TransportRequest } from '../../src/client/transport';
import { PetinvError } from '../../src/errors';
import { errorBody } from '../helpers/lying-server';
import { useMockService } from '../helpers/mock-service';

const BASE = 'https://inventory.test/v1';
const BIG = '9223372036854775807';

/** The client over the transport the CLI runs (undici's), at the HTTP edges undici's MockAgent makes. */
const { mock, transport } = useMockService(BASE);

function makeClient(overrides: Partial<Parameters<typeof createClient>[0]> = {}) {
  const sleeps: number[] = [];
  const warnings: string[] = [];
  const client = createClient({
    baseUrl: BASE,
    apiKey: 'secret-key',
    transport,
    envName: 'staging',
    userAgent: 'petinv/test',
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    random: () => 0.5,
    onWarning: (message) => warnings.push(message),
    ...overrides,
  });
  return { client, sleeps, warnings };
}

const reset = () => Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });

async function failure(promise: Promise<unknown>): Promise<PetinvError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(PetinvError);
  return error as PetinvError;
}

describe('requests', () => {
  it('sends the bearer key, a User-Agent and Accept, and reads petIds above 2^53 exactly', async () => {
    mock('GET', '/inventory', {
      headers: {
        authorization: 'Bearer secret-key',
        'user-agent': 'petinv/test',
        accept: 'application/json',
      },
    }).reply(200, `[{"petId":${BIG},"quantity":3,"status":"available"}]`, {
      headers: { 'Content-Type': 'application/json' },
    });
    const { client } = makeClient();
    expect(await client.listInventory()).toEqual([{ petId: BigInt(BIG), quantity: 3, status: 'available' }]);
  });

  it('PATCHes {"quantity": N} as JSON to /inventory/{petId}', async () => {
    mock('PATCH', `/inventory/${BIG}`, {
      body: '{"quantity":7}',
      headers: { 'content-type': 'application/json' },
    }).reply(200, `{"petId":${BIG},"quantity":7,"status":"sold"}`);
    const { client } = makeClient();
    expect(await client.updateInventory(BigInt(BIG), 7)).toEqual({
      petId: BigInt(BIG),
      quantity: 7,
      status: 'sold',
    });
  });
});

describe('error statuses', () => {
  it.each([
    [
      400,
      'invalid_body',
      'rejected',
      6,
      /rejected PATCH \/inventory\/42 in staging \(400 invalid_body: nope\)/,
    ],
    [401, 'unauthorized', 'auth', 4, /refused the API key for staging .*petinv login --env staging/],
    [403, 'forbidden', 'auth', 4, /refused the API key/],
    [404, 'pet_not_found', 'notFound', 5, /^pet 42 not found in staging \(404 pet_not_found: nope\)$/],
    [409, 'conflict', 'rejected', 6, /rejected/],
    [
      500,
      'internal_error',
      'server',
      8,
      /failed PATCH \/inventory\/42 in staging \(500 internal_error: nope\); try again later/,
    ],
    [501, 'not_implemented', 'server', 8, /501/],
  ])('%i maps to %s', async (status, code, kind, exitCode, message) => {
    mock('PATCH', '/inventory/42').reply(status, errorBody(status, code));
    const error = await failure(makeClient().client.updateInventory(42n, 1));
    expect(error.kind).toBe(kind);
    expect(error.exitCode).toBe(exitCode);
    expect(error.message).toMatch(message);
    expect(error.body).toEqual({ code, message: 'nope', status });
  });

  it('takes the exit code from the HTTP status when the Error body disagrees', async () => {
    mock('PATCH', '/inventory/42').reply(404, errorBody(500, 'pet_not_found'));
    const error = await failure(makeClient().client.updateInventory(42n, 1));
    expect(error.kind).toBe('notFound');
    expect(error.body.status).toBe(404);
  });

  it('describes an error that has no Error body', async () => {
    mock('GET', '/inventory').reply(404, '<html>no</html>');
    const error = await failure(makeClient().client.listInventory());
    expect(error.message).toContain(
      'GET /inventory not found in staging (404: <html>no</html>); check the base URL',
    );
    expect(error.body.code).toBe('http_404');
  });

  it('never retries a 4xx other than 429', async () => {
    mock('PATCH', '/inventory/42').reply(400, errorBody(400, 'invalid_body'));
    const { client, sleeps } = makeClient();
    await failure(client.updateInventory(42n, 1));
    expect(sleeps).toEqual([]);
  });
});

describe('retries', () => {
  it('retries 502, 503 and 504 with exponential backoff and jitter, then succeeds', async () => {
    for (const status of [502, 503, 504]) mock('GET', '/inventory').reply(status, '');
    mock('GET', '/inventory').reply(200, '[]');
    const { client, sleeps } = makeClient();
    expect(await client.listInventory()).toEqual([]);
    expect(sleeps).toEqual([100, 200, 400]);
  });

  it('honours Retry-After in seconds and as an HTTP date', async () => {
    mock('GET', '/inventory').reply(429, errorBody(429, 'rate_limited'), { headers: { 'Retry-After': '2' } });
    mock('GET', '/inventory').reply(503, '', {
      headers: { 'Retry-After': new Date(Date.now() + 3000).toUTCString() },
    });
    mock('GET', '/inventory').reply(200, '[]');
    const { client, sleeps } = makeClient();
    await client.listInventory();
    expect(sleeps[0]).toBe(2000);
    expect(sleeps[1]).toBeGreaterThan(1000);
    expect(sleeps[1]).toBeLessThanOrEqual(3000);
  });

  it('gives up after --retries further attempts with the last status', async () => {
    mock('PATCH', '/inventory/1')
      .reply(503, errorBody(503, 'unavailable'), { headers: { 'Retry-After': '0' } })
      .times(3);
    const { client, sleeps } = makeClient({ retries: 2 });
    const error = await failure(client.updateInventory(1n, 1));
    expect(error.kind).toBe('server');
    expect(error.body.status).toBe(503);
    expect(sleeps).toEqual([0, 0]);
  });

  it('retries a network error and reports it as a network failure in the end', async () => {
    mock('GET', '/inventory').replyWithError(reset()).times(2);
    const { client, sleeps } = makeClient({ retries: 1 });
    const error = await failure(client.listInventory());
    expect(error.kind).toBe('network');
    expect(error.exitCode).toBe(7);
    expect(error.message).toMatch(
      /cannot reach https:\/\/inventory.test\/v1\/inventory in staging .* after 2 attempts/,
    );
    expect(sleeps).toHaveLength(1);
  });

  it('a network error then a success is a success', async () => {
    mock('GET', '/inventory').replyWithError(reset());
    mock('GET', '/inventory').reply(200, '[]');
    expect(await makeClient().client.listInventory()).toEqual([]);
  });

  it('computes backoff delays, and takes Retry-After as it is (the budget decides, not a cap)', () => {
    expect([0, 1, 2, 3, 10].map((attempt) => retryDelayMs(attempt, null, () => 1).ms)).toEqual([
      200, 400, 800, 1600, 5000,
    ]);
    expect(retryDelayMs(0, '120', () => 1)).toEqual({ ms: 120_000, retryAfter: true });
    expect(retryDelayMs(0, 'soon', () => 0)).toEqual({ ms: 0, retryAfter: false });
    expect(retryDelayMs(0, '-5', () => 0)).toEqual({ ms: 0, retryAfter: false });
  });
});

describe('the waiting budget (--max-retry-wait)', () => {
  it('gives up at once when Retry-After asks for more than the budget, and says why', async () => {
    mock('GET', '/inventory').reply(503, errorBody(503, 'unavailable', 'maintenance'), {
      headers: { 'Retry-After': '3600' },
    });
    const { client, sleeps } = makeClient();
    const error = await failure(client.listInventory());
    expect(sleeps).toEqual([]);
    expect(error.exitCode).toBe(8);
    expect(error.message).toBe(
      'the service failed GET /inventory in staging (503 unavailable: maintenance); it asked for 3600s more before a retry, past the 60s petinv waits in all (--max-retry-wait, PETINV_MAX_RETRY_WAIT); raise it, or try again later',
    );
  });

  it('counts every wait of one request against the budget', async () => {
    mock('PATCH', '/inventory/1')
      .reply(429, errorBody(429, 'rate_limited'), { headers: { 'Retry-After': '20' } })
      .times(3);
    const waits: unknown[] = [];
    const { client, sleeps } = makeClient({
      maxRetryWaitMs: 50_000,
      onRetryWait: (wait) => waits.push(wait),
    });
    const error = await failure(client.updateInventory(1n, 1));
    expect(sleeps).toEqual([20_000, 20_000]);
    expect(waits).toEqual([
      { operation: 'PATCH /inventory/1', ms: 20_000, status: 429, retryAfter: true },
      { operation: 'PATCH /inventory/1', ms: 20_000, status: 429, retryAfter: true },
    ]);
    expect(error.message).toContain('it asked for 20s more before a retry, past the 50s petinv waits in all');
  });

  it('a budget of 0 never waits', async () => {
    mock('GET', '/inventory').reply(503, '', { headers: { 'Retry-After': '1' } });
    const { client, sleeps } = makeClient({ maxRetryWaitMs: 0 });
    await failure(client.listInventory());
    expect(sleeps).toEqual([]);
  });
});

describe('the body size limit (--max-body-size)', () => {
  it('cuts off a larger answer with one error naming the limit and how to raise it, not retried', async () => {
    mock('GET', '/inventory').reply(200, `[${'{"petId":1,"quantity":1,"status":"sold"},'.repeat(100)}]`);
    const error = await failure(makeClient({ maxBodyBytes: 1024 }).client.listInventory());
    expect(error.exitCode).toBe(8);
    expect(error.body.code).toBe('body_too_large');
    expect(error.message).toBe(
      'the answer from staging to GET /inventory is larger than 1 KiB, the limit petinv reads; raise it with --max-body-size or PETINV_MAX_BODY_SIZE',
    );
  });

  it('reads an answer of exactly the limit', async () => {
    mock('GET', '/inventory').reply(200, '[]');
    expect(await makeClient({ maxBodyBytes: 2 }).client.listInventory()).toEqual([]);
  });
});

describe('timeouts', () => {
  it('aborts an attempt that takes longer than the timeout, and says so', async () => {
    mock('GET', '/inventory').reply(200, '[]').delay(400).times(2);
    const { client } = makeClient({ timeoutMs: 50, retries: 1 });
    const error = await failure(client.listInventory());
    expect(error.kind).toBe('server');
    expect(error.body.code).toBe('timeout');
    expect(error.message).toMatch(
      /no answer from .* within 50 ms in staging after 2 attempts; raise --timeout/,
    );
  });
});

describe('the contract is checked', () => {
  it.each([
    ['a body that is not JSON', 'oops', /not JSON/],
    ['an object instead of an array', '{"items":[]}', /body: must be array/],
    [
      'a fractional quantity',
      '[{"petId":1,"quantity":1.5,"status":"sold"}]',
      /0\.quantity: must be a JSON integer/,
    ],
    [
      'an unknown status',
      '[{"petId":1,"quantity":1,"status":"lost"}]',
      /0\.status: must be one of available, pending, sold/,
    ],
    ['a missing petId', '[{"quantity":1,"status":"sold"}]', /0\.petId/],
    [
      'a petId beyond int64',
      '[{"petId":9223372036854775808,"quantity":1,"status":"sold"}]',
      /0\.petId: must be an integer within int64/,
    ],
    [
      'a petId as a string',
      '[{"petId":"5","quantity":1,"status":"sold"}]',
      /0\.petId: must be a JSON integer/,
    ],
    [
      'a petId written 5.0',
      '[{"petId":5.0,"quantity":1,"status":"sold"}]',
      /0\.petId: must be a JSON integer/,
    ],
    [
      'a quantity past 2^53-1, which a double would round',
      '[{"petId":1,"quantity":9007199254740993,"status":"sold"}]',
      /0\.quantity: must be an integer a double holds exactly/,
    ],
    [
      'a quantity of 2^53',
      '[{"petId":1,"quantity":9007199254740992,"status":"sold"}]',
      /0\.quantity: must be an integer a double holds exactly/,
    ],
    [
      'a quantity written 1.0',
      '[{"petId":1,"quantity":1.0,"status":"sold"}]',
      /0\.quantity: must be a JSON integer/,
    ],
    [
      'a petId key written twice',
      '[{"petId":1,"petId":2,"quantity":1,"status":"sold"}]',
      /not JSON \(the key "petId" is written twice in one object/,
    ],
  ])('rejects %s', async (_name, body, message) => {
    mock('GET', '/inventory').reply(200, body);
    const error = await failure(makeClient().client.listInventory());
    expect(error.kind).toBe('server');
    expect(error.body.code).toBe('invalid_response');
    expect(error.message).toMatch(
      /^the answer from staging to GET \/inventory does not match the contract: /,
    );
    expect(error.message).toMatch(message);
  });

  it('accepts a quantity of 2^53-1 and a negative one (the spec sets no bounds)', async () => {
    mock('GET', '/inventory').reply(
      200,
      '[{"petId":1,"quantity":9007199254740991,"status":"sold"},{"petId":2,"quantity":-3,"status":"sold"}]',
    );
    expect((await makeClient().client.listInventory()).map((item) => item.quantity)).toEqual([
      9007199254740991, -3,
    ]);
  });

  it('rejects an update answered for another pet', async () => {
    mock('PATCH', '/inventory/5').reply(200, '{"petId":6,"quantity":1,"status":"sold"}');
    expect((await failure(makeClient().client.updateInventory(5n, 1))).message).toContain(
      'it answered for pet 6',
    );
  });
});

describe('deprecation', () => {
  it('warns once about Deprecation and Sunset headers', async () => {
    mock('GET', '/inventory')
      .reply(200, '[]', { headers: { Deprecation: '@1767225600', Sunset: 'Wed, 01 Jul 2026 00:00:00 GMT' } })
      .times(2);
    const { client, warnings } = makeClient();
    await client.listInventory();
    await client.listInventory();
    expect(warnings).toEqual([
      'GET /inventory is deprecated by the service in staging (Deprecation: @1767225600; Sunset: Wed, 01 Jul 2026 00:00:00 GMT); it may stop working',
    ]);
  });
});

describe('redirects', () => {
  it('are not followed: one request, a config error naming the Location', async () => {
    // Were the redirect followed, the second host would be asked, and MockAgent refuses it.
    mock('PATCH', '/inventory/4').reply(307, '', {
      headers: { Location: 'https://moved.test/api/v1/inventory/4' },
    });
    const { client } = makeClient();
    const error = await failure(client.updateInventory(4n, 1));
    expect(error.exitCode).toBe(3);
    expect(error.body).toEqual({ code: 'redirect', message: 'redirect (307) not followed', status: 307 });
    expect(error.message).toBe(
      'the service in staging answered PATCH /inventory/4 with a redirect (307, Location: https://moved.test/api/v1/inventory/4); petinv does not follow redirects, so the API key goes nowhere else; if the service moved, run: petinv env set-url staging https://moved.test/api/v1 (its stored API key, if any, would then go to https://moved.test: do so only if you trust it)',
    );
  });

  it('without a Location, or to somewhere that is not the same path, suggest no address', async () => {
    mock('GET', '/inventory').reply(302, '');
    mock('GET', '/inventory').reply(308, '', { headers: { Location: '/login?next=%2Finventory' } });
    const { client } = makeClient();
    expect((await failure(client.listInventory())).message).toContain(
      '(302, no Location); petinv does not follow redirects, so the API key goes nowhere else; if the service moved, run: petinv env set-url staging <url>',
    );
    expect((await failure(client.listInventory())).message).toContain(
      '(308, Location: /login?next=%2Finventory); petinv does not follow',
    );
  });
});

describe('the requests the client hands its transport', () => {
  it('carry the base URL split once into origin and path, and the item read back exactly', async () => {
    const requests: TransportRequest[] = [];
    const client = createClient({
      baseUrl: 'http://127.0.0.1:4010/v1',
      apiKey: 'k',
      transport: async (request) => {
        requests.push(request);
        return { status: 200, header: () => null, text: `{"petId":${BIG},"quantity":3,"status":"sold"}` };
      },
    });
    expect(await client.updateInventory(BigInt(BIG), 3)).toEqual({
      petId: BigInt(BIG),
      quantity: 3,
      status: 'sold',
    });
    expect(requests[0]).toMatchObject({
      url: `http://127.0.0.1:4010/v1/inventory/${BIG}`,
      origin: 'http://127.0.0.1:4010',
      path: `/v1/inventory/${BIG}`,
      headers: { 'Content-Type': 'application/json', Authorization: 'Bearer k' },
    });
  });

  it('leave a base URL that does not split cleanly to the transport to parse', async () => {
    const requests: TransportRequest[] = [];
    const client = createClient({
      baseUrl: 'http://EXAMPLE.test:80/v1',
      apiKey: 'k',
      transport: async (request) => {
        requests.push(request);
        return { status: 200, header: () => null, text: '[]' };
      },
    });
    await client.listInventory();
    expect(requests[0]?.url).toBe('http://EXAMPLE.test:80/v1/inventory');
    expect(requests[0]?.origin).toBeUndefined();
  });
});
