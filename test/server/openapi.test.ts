import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, startInventoryServer } from '../../src/server/start';
import { bearer, jsonBody, request } from '../helpers/http';

const KEY = 'openapi-key';
let server: RunningServer;
// biome-ignore lint/suspicious/noExplicitAny: the document is walked by path in the checks below
let document: any;

beforeAll(async () => {
  server = await startInventoryServer({ port: 0, apiKeys: [KEY], seed: 5 });
  document = (await request(`${server.baseUrl}/openapi.json`)).json();
});
afterAll(() => server.close());

/** Validates a real response against what the document says for that operation and status. */
function checkAgainstDocument(path: string, method: string, status: number, body: unknown) {
  const response = document.paths[path][method].responses[String(status)];
  expect(response, `${method} ${path} documents ${status}`).toBeDefined();
  const schema = response.content?.['application/json']?.schema;
  if (!schema) return;
  const ajv = new Ajv2020({ strict: false });
  ajv.addSchema({ $id: 'doc', components: document.components });
  const validate = ajv.compile({
    ...JSON.parse(JSON.stringify(schema).replaceAll('"#/components', '"doc#/components')),
  });
  expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
}

describe('GET /v1/openapi.json', () => {
  it('is served without a key and is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(document);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(document.openapi).toBe('3.1.0');
  });

  it('describes exactly the routes the server answers', () => {
    expect(Object.keys(document.paths).sort()).toEqual([
      '/inventory',
      '/inventory/{petId}',
      '/pets/{petId}',
      '/store/orders',
    ]);
  });

  it('agrees with the real responses of every route and status', async () => {
    const list = await request(`${server.baseUrl}/inventory`, { headers: bearer(KEY) });
    checkAgainstDocument('/inventory', 'get', list.status, list.json());
    const notAuthorized = await request(`${server.baseUrl}/inventory`);
    checkAgainstDocument('/inventory', 'get', notAuthorized.status, notAuthorized.json());
    const wrongMethod = await request(`${server.baseUrl}/inventory`, {
      method: 'POST',
      headers: bearer(KEY),
    });
    checkAgainstDocument('/inventory', 'get', wrongMethod.status, wrongMethod.json());

    const responses = [
      await request(`${server.baseUrl}/inventory/1`, jsonBody(KEY, '{"quantity":3}')),
      await request(`${server.baseUrl}/inventory/1`, jsonBody(KEY, '{"quantity":-3}')),
      await request(`${server.baseUrl}/inventory/999`, jsonBody(KEY, '{"quantity":3}')),
      await request(`${server.baseUrl}/inventory/1`, {
        method: 'PATCH',
        headers: { ...bearer(KEY), 'Content-Type': 'text/plain' },
        body: 'x',
      }),
      await request(
        `${server.baseUrl}/inventory/1`,
        jsonBody(KEY, `{"quantity":1,"x":"${'y'.repeat(5000)}"}`),
      ),
      await request(`${server.baseUrl}/inventory/1`, { method: 'PATCH' }),
    ];
    expect(responses.map((response) => response.status)).toEqual([200, 400, 404, 415, 413, 401]);
    for (const response of responses)
      checkAgainstDocument('/inventory/{petId}', 'patch', response.status, response.json());

    const pets = await request(`${server.baseUrl}/pets/1`, { headers: bearer(KEY) });
    checkAgainstDocument('/pets/{petId}', 'get', pets.status, pets.json());
    const orders = await request(`${server.baseUrl}/store/orders`, { headers: bearer(KEY) });
    checkAgainstDocument('/store/orders', 'get', orders.status, orders.json());
  });
});
