import { Agent, createServer, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BODY_LIMIT_BYTES } from '../../src/contract/limits';
import { ApiError } from '../../src/contract/schemas';
import { createInventoryApp, type RequestLogEntry } from '../../src/server/app';
import { PETS_DEPRECATION } from '../../src/server/handlers';
import { type RunningServer, startInventoryServer } from '../../src/server/start';
import { InventoryStore, seedInventory } from '../../src/server/store';
import { bearer, jsonBody, request } from '../helpers/http';
import { readJournal } from '../helpers/journal';
import { temporaryDirectory } from '../helpers/serve';

const KEY = 'test-key-1';
const OTHER_KEY = 'test-key-2';
let server: RunningServer;
let url: string;

beforeAll(async () => {
  server = await startInventoryServer({ port: 0, apiKeys: [KEY, OTHER_KEY], seed: 12 });
  url = server.baseUrl;
});
afterAll(() => server.close());

/** Every error is {code, message, status} with status equal to the HTTP status, as JSON. */
function expectError(response: Awaited<ReturnType<typeof request>>, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  const body = ApiError.parse(response.json());
  expect(body).toMatchObject({ status, code });
  expect(body.message).not.toMatch(/\n\s+at |\/work\/|node_modules/);
}

describe('GET /v1/inventory', () => {
  it('lists every pet in petId order with an ETag', async () => {
    const response = await request(`${url}/inventory`, { headers: bearer(KEY) });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    const items = response.json();
    expect(items).toHaveLength(12);
    expect(items.map((item: { petId: number }) => item.petId)).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
    ]);
    expect(new Set(items.map((item: { status: string }) => item.status))).toEqual(
      new Set(['available', 'pending', 'sold']),
    );
    expect(response.headers.etag).toMatch(/^"[0-9a-f]+-\d+"$/);
  });

  it('accepts every configured key', async () => {
    expect((await request(`${url}/inventory`, { headers: bearer(OTHER_KEY) })).status).toBe(200);
  });

  it('answers 304 to If-None-Match with the current tag, and 200 once a quantity changed', async () => {
    const first = await request(`${url}/inventory`, { headers: bearer(KEY) });
    const etag = String(first.headers.etag);
    const unchanged = await request(`${url}/inventory`, {
      headers: { ...bearer(KEY), 'If-None-Match': etag },
    });
    expect(unchanged.status).toBe(304);
    expect(unchanged.text).toBe('');
    expect(unchanged.headers.etag).toBe(etag);
    const item = first.json()[0];
    await request(
      `${url}/inventory/${item.petId}`,
      jsonBody(KEY, JSON.stringify({ quantity: item.quantity + 1 })),
    );
    const changed = await request(`${url}/inventory`, { headers: { ...bearer(KEY), 'If-None-Match': etag } });
    expect(changed.status).toBe(200);
    expect(changed.headers.etag).not.toBe(etag);
  });

  it('keeps the ETag when an update sets the quantity it already had', async () => {
    const before = await request(`${url}/inventory`, { headers: bearer(KEY) });
    const item = before.json()[1];
    await request(
      `${url}/inventory/${item.petId}`,
      jsonBody(KEY, JSON.stringify({ quantity: item.quantity })),
    );
    const after = await request(`${url}/inventory`, { headers: bearer(KEY) });
    expect(after.headers.etag).toBe(before.headers.etag);
  });
});

describe('PATCH /v1/inventory/{petId}', () => {
  it('sets the quantity, leaves the status, and answers the updated item', async () => {
    const before = (await request(`${url}/inventory`, { headers: bearer(KEY) })).json()[2];
    const response = await request(`${url}/inventory/${before.petId}`, jsonBody(KEY, '{"quantity": 77}'));
    expect(response.status).toBe(200);
    expect(response.json()).toEqual({ petId: before.petId, quantity: 77, status: before.status });
    const listed = (await request(`${url}/inventory`, { headers: bearer(KEY) })).json()[2];
    expect(listed).toEqual({ petId: before.petId, quantity: 77, status: before.status });
  });

  it('accepts 0 and 2^53-1, and an application/*+json type with a charset', async () => {
    expect((await request(`${url}/inventory/5`, jsonBody(KEY, '{"quantity":0}'))).json().quantity).toBe(0);
    const max = await request(`${url}/inventory/5`, {
      method: 'PATCH',
      headers: { ...bearer(KEY), 'Content-Type': 'application/merge-patch+json; charset=utf-8' },
      body: `{"quantity":${Number.MAX_SAFE_INTEGER}}`,
    });
    expect(max.status).toBe(200);
    expect(max.text).toContain(`"quantity":${Number.MAX_SAFE_INTEGER}`);
  });

  it('applies every one of 100 concurrent updates, each once, and ends in the state their order gives', async () => {
    // A durable server of its own: its journal is the order in which the updates were applied.
    const dataFile = join(temporaryDirectory(), 'inventory.json');
    const durable = await startInventoryServer({ port: 0, apiKeys: [KEY], seed: 12, dataFile });
    try {
      const sent = Array.from({ length: 100 }, (_, i) => ({ petId: (i % 10) + 1, quantity: 1000 + i }));
      const responses = await Promise.all(
        sent.map(({ petId, quantity }) =>
          request(`${durable.baseUrl}/inventory/${petId}`, jsonBody(KEY, JSON.stringify({ quantity }))),
        ),
      );
      // Each update answered with the item as its own write left it.
      expect(responses.map((response) => [response.status, response.json()])).toEqual(
        sent.map(({ petId, quantity }) => [200, expect.objectContaining({ petId, quantity })]),
      );
      // Acknowledged means written: the journal holds each of the 100, exactly once, in some order...
      const applied = readJournal(dataFile)
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as { petId: number; quantity: number });
      const byQuantity = (a: { quantity: number }, b: { quantity: number }) => a.quantity - b.quantity;
      expect([...applied].sort(byQuantity)).toEqual(sent);
      // ...and the state served is what applying them in that order gives: each pet's last update wins.
      const expected = new Map(applied.map(({ petId, quantity }) => [petId, quantity]));
      const items = (await request(`${durable.baseUrl}/inventory`, { headers: bearer(KEY) })).json();
      const served = new Map(
        items.map((item: { petId: number; quantity: number }) => [item.petId, item.quantity]),
      );
      for (const [petId, quantity] of expected) expect([petId, served.get(petId)]).toEqual([petId, quantity]);
    } finally {
      await durable.close();
    }
  });
});

describe('bad input: 400 with a stable code', () => {
  const cases: Array<[string, string | undefined, string, Record<string, string>?]> = [
    ['missing body', undefined, 'missing_body'],
    ['empty body', '', 'missing_body'],
    ['whitespace body', '   ', 'missing_body'],
    ['malformed JSON', '{"quantity": ', 'malformed_json'],
    ['an array body', '[1]', 'invalid_body'],
    ['a string body', '"5"', 'invalid_body'],
    ['null body', 'null', 'invalid_body'],
    ['quantity missing', '{}', 'invalid_body'],
    ['quantity 1.5', '{"quantity":1.5}', 'invalid_body'],
    ['quantity "5"', '{"quantity":"5"}', 'invalid_body'],
    ['quantity true', '{"quantity":true}', 'invalid_body'],
    ['quantity null', '{"quantity":null}', 'invalid_body'],
    ['quantity 1e400', '{"quantity":1e400}', 'invalid_body'],
    ['quantity -1', '{"quantity":-1}', 'invalid_body'],
    ['quantity 2^53', '{"quantity":9007199254740992}', 'invalid_body'],
    ['an unknown field', '{"quantity":1,"status":"sold"}', 'invalid_body'],
  ];
  it.each(cases)('%s', async (_name, body, code) => {
    const response = await request(`${url}/inventory/1`, {
      method: 'PATCH',
      headers: { ...bearer(KEY), ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body,
    });
    expectError(response, 400, code);
  });

  it('names the field and the problem', async () => {
    const response = await request(`${url}/inventory/1`, jsonBody(KEY, '{"quantity":1.5}'));
    expect(response.json().message).toBe('quantity: must be an integer');
    const unknown = await request(`${url}/inventory/1`, jsonBody(KEY, '{"quantity":1,"colour":"red"}'));
    expect(unknown.json().message).toContain('unknown field "colour"');
  });

  it.each(['abc', '1.5', '1e3', '9223372036854775808', '-9223372036854775809', '%20', '0x10', '01'])(
    'petId %s in the path',
    async (petId) => {
      expectError(
        await request(`${url}/inventory/${petId}`, jsonBody(KEY, '{"quantity":1}')),
        400,
        'invalid_pet_id',
      );
    },
  );
});

describe('auth: 401 with WWW-Authenticate: Bearer, before anything else', () => {
  const cases: Array<[string, Record<string, string>]> = [
    ['no Authorization header', {}],
    ['another scheme', { Authorization: `Basic ${Buffer.from(`x:${KEY}`).toString('base64')}` }],
    ['an empty key', { Authorization: 'Bearer ' }],
    ['a wrong key', { Authorization: 'Bearer not-the-key' }],
    ['a key that is a prefix of the right one', { Authorization: `Bearer ${KEY.slice(0, -1)}` }],
  ];
  it.each(cases)('GET with %s', async (_name, headers) => {
    const response = await request(`${url}/inventory`, { headers });
    expectError(response, 401, 'unauthorized');
    expect(response.headers['www-authenticate']).toMatch(/^Bearer/);
  });
  it.each(cases)('PATCH with %s, even with a bad body and a bad petId', async (_name, headers) => {
    const response = await request(`${url}/inventory/abc`, {
      method: 'PATCH',
      headers: { ...headers, 'Content-Type': 'text/plain' },
      body: 'x',
    });
    expectError(response, 401, 'unauthorized');
  });
  it('a wrong method without a key is 401, not 405', async () => {
    expectError(await request(`${url}/inventory`, { method: 'DELETE' }), 401, 'unauthorized');
  });
  it('checks every request of a kept-alive connection, after a valid key too', async () => {
    // The connection remembers its last valid header; a different one on it is checked anew.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const statusOn = (headers: Record<string, string>) =>
      new Promise<{ status: number; reused: boolean }>((resolve, reject) => {
        const req = httpRequest(`${url}/inventory`, { headers, agent }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket }));
        });
        req.on('error', reject);
        req.end();
      });
    try {
      const statuses = [];
      for (const headers of [
        bearer(KEY),
        bearer('not-the-key'),
        {},
        { Authorization: `Basic ${KEY}` },
        bearer(OTHER_KEY),
        bearer(KEY),
      ])
        statuses.push(await statusOn(headers));
      expect(statuses.map(({ status }) => status)).toEqual([200, 401, 401, 401, 200, 200]);
      expect(statuses.slice(1).every(({ reused }) => reused)).toBe(true);
    } finally {
      agent.destroy();
    }
  });
});

describe('PATCH with Petinv-If-Quantity (a petinv serve extension)', () => {
  const patch = (petId: number, quantity: number, ifQuantity: string) => {
    const options = jsonBody(KEY, JSON.stringify({ quantity }));
    return request(`${url}/inventory/${petId}`, {
      ...options,
      headers: { ...options.headers, 'Petinv-If-Quantity': ifQuantity },
    });
  };

  const holds = async (petId: number) => {
    const items = (await request(`${url}/inventory`, { headers: bearer(KEY) })).json() as {
      petId: number;
      quantity: number;
    }[];
    return items.find((item) => item.petId === petId)?.quantity;
  };

  it('applies the update only if the pet holds that quantity; else 412 with what it holds, nothing changed', async () => {
    const before = (await holds(7)) as number;
    const refused = await patch(7, 71, String(before + 1));
    expectError(refused, 412, 'quantity_changed');
    expect(refused.headers['petinv-quantity']).toBe(String(before));
    expect(await holds(7)).toBe(before);
    expect((await patch(7, 71, String(before))).status).toBe(200);
    expect(await holds(7)).toBe(71);
    expectError(await patch(7, 72, 'seven'), 400, 'malformed_request');
    expect(await holds(7)).toBe(71);
  });
});

describe('other statuses', () => {
  it('404 for an unknown pet', async () => {
    expectError(
      await request(`${url}/inventory/424242`, jsonBody(KEY, '{"quantity":1}')),
      404,
      'pet_not_found',
    );
  });
  it.each(['/v1/nothing', '/v2/inventory', '/', '/v1/inventory/1/extra'])(
    '404 for the unknown route %s',
    async (path) => {
      expectError(
        await request(`${server.baseUrl.replace('/v1', '')}${path}`, { headers: bearer(KEY) }),
        404,
        'not_found',
      );
    },
  );
  it.each([
    ['/inventory', 'POST', 'GET, HEAD'],
    ['/inventory', 'PUT', 'GET, HEAD'],
    ['/inventory/1', 'GET', 'PATCH'],
    ['/inventory/1', 'DELETE', 'PATCH'],
  ])('405 with Allow for %s %s', async (path, method, allow) => {
    const response = await request(`${url}${path}`, { method, headers: bearer(KEY) });
    expectError(response, 405, 'method_not_allowed');
    expect(response.headers.allow).toBe(allow);
  });
  it(`413 for a body over ${BODY_LIMIT_BYTES} bytes`, async () => {
    const body = JSON.stringify({ quantity: 1, padding: 'x'.repeat(BODY_LIMIT_BYTES) });
    expectError(await request(`${url}/inventory/1`, jsonBody(KEY, body)), 413, 'payload_too_large');
  });
  it.each(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x'])(
    '415 for %s',
    async (type) => {
      const response = await request(`${url}/inventory/1`, {
        method: 'PATCH',
        headers: { ...bearer(KEY), 'Content-Type': type },
        body: '{"quantity":1}',
      });
      expectError(response, 415, 'unsupported_media_type');
    },
  );
  it('415 for a JSON body sent with no Content-Type', async () => {
    expectError(
      await request(`${url}/inventory/1`, { method: 'PATCH', headers: bearer(KEY), body: '{"quantity":1}' }),
      415,
      'unsupported_media_type',
    );
  });
  it('501 with an RFC 9745 Deprecation header for /v1/pets/{petId}', async () => {
    const response = await request(`${url}/pets/1`, { headers: bearer(KEY) });
    expectError(response, 501, 'not_implemented');
    expect(response.headers.deprecation).toBe(PETS_DEPRECATION);
    expect(response.headers.deprecation).toMatch(/^@\d+$/);
  });
  it('501 for /v1/store/orders', async () => {
    const response = await request(`${url}/store/orders`, { headers: bearer(KEY) });
    expectError(response, 501, 'not_implemented');
    expect(response.headers.deprecation).toBeUndefined();
  });
  it('/healthz answers 200 without a key', async () => {
    const response = await request(`${url.replace('/v1', '')}/healthz`);
    expect(response.status).toBe(200);
    expect(response.json()).toEqual({ status: 'ok' });
  });
});

describe('an unexpected fault', () => {
  it('is a 500 Error body with no internals, and a log entry', async () => {
    const entries: RequestLogEntry[] = [];
    const store = new InventoryStore(seedInventory(3), {
      append: (_changes, done) =>
        done(new Error('EIO: i/o error, write /var/lib/petinv/inventory.json.journal')),
      wantsSnapshot: () => false,
      writeSnapshot: async () => {},
    });
    const app = createInventoryApp({ store, apiKeys: [KEY], log: (entry) => entries.push(entry) });
    const faulty = createServer((req, res) => void app(req, res));
    await new Promise<void>((resolve) => faulty.listen(0, '127.0.0.1', resolve));
    const { port } = faulty.address() as { port: number };
    const response = await request(
      `http://127.0.0.1:${port}/v1/inventory/1`,
      jsonBody(KEY, '{"quantity":9}'),
    );
    expectError(response, 500, 'internal_error');
    expect(response.text).not.toContain('EIO');
    expect(entries).toContainEqual({
      method: 'PATCH',
      path: '/v1/inventory/1',
      fault: expect.stringContaining('EIO'),
    });
    await new Promise((resolve) => faulty.close(resolve));
  });
});
