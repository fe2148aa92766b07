import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_BASE_URL } from '../../src/contract/defaults';
import { ERROR_CODES, statusOf } from '../../src/contract/error-codes';
import { BODY_LIMIT_BYTES } from '../../src/contract/limits';
import { PET_STATUSES } from '../../src/contract/schemas';
import { PETS_DEPRECATION } from '../../src/server/handlers';
import WRITTEN from '../../src/server/openapi.json';
import { API_PREFIX, methodNotAllowed, ROUTES, type Route } from '../../src/server/routes';
import { type RunningServer, startInventoryServer } from '../../src/server/start';
import { bearer, jsonBody, request } from '../helpers/http';
import { schemaChecker, validateDocument } from '../helpers/openapi';

const KEY = 'openapi-key';
/** A route's path in the document, whose server URL already ends in API_PREFIX. */
const describedPath = (route: Route) => route.pattern.slice(API_PREFIX.length);
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
  const validate = schemaChecker(document)(schema);
  expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
}

// biome-ignore lint/suspicious/noExplicitAny: walking the document
type Node = any;
/** Every operation of the document, as [path, method, operation]. */
const operations = (doc: Node): Array<[string, string, Node]> =>
  Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item as Node).map(
      ([method, operation]) => [path, method, operation] as [string, string, Node],
    ),
  );

describe('GET /v1/openapi.json', () => {
  it('is served without a key and is a valid OpenAPI 3.1 document', async () => {
    const result = await validateDocument(document);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(document.openapi).toBe('3.1.0');
  });

  it('describes exactly the routes the server answers', async () => {
    const described = ROUTES.filter((route) => route.described);
    expect(Object.keys(document.paths).sort()).toEqual(described.map(describedPath).sort());
    for (const route of described) {
      const path = route.pattern.replace(/\{\w+\}$/, '1');
      const response = await request(`${server.baseUrl.replace('/v1', '')}${path}`, { headers: bearer(KEY) });
      expect(response.status, path).not.toBe(404);
    }
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

describe('the document as tools read it', () => {
  it('names the address this server really listens on', () => {
    expect(document.servers).toEqual([{ url: server.baseUrl, description: 'this petinv serve' }]);
    expect(server.baseUrl).not.toContain(':4010');
  });

  it('gives every parameter, request body and response body an example that its own schema accepts', () => {
    let examples = 0;
    for (const [path, method, operation] of operations(document)) {
      for (const parameter of operation.parameters ?? []) {
        expect(parameter.example, `${method} ${path} parameter ${parameter.name}`).toBeDefined();
        expect(schemaChecker(document)(parameter.schema)(parameter.example)).toBe(true);
        examples++;
      }
      const bodies: Array<[string, Node]> = [
        ...(operation.requestBody ? [['request', operation.requestBody] as [string, Node]] : []),
        ...Object.entries(operation.responses as Record<string, Node>),
      ];
      for (const [status, body] of bodies) {
        for (const header of Object.values((body.headers ?? {}) as Record<string, Node>))
          expect(header.example, `${method} ${path} ${status} header`).toBeDefined();
        const media = body.content?.['application/json'];
        if (!media) {
          // Only HEAD answers and 304 go without a body.
          expect(method === 'head' || status === '304', `${method} ${path} ${status} has a body`).toBe(true);
          continue;
        }
        expect(media.example, `${method} ${path} ${status}`).toBeDefined();
        const validate = schemaChecker(document)(media.schema);
        expect(
          validate(media.example),
          `${method} ${path} ${status}: ${JSON.stringify(validate.errors)}`,
        ).toBe(true);
        if (Number(status) >= 400) {
          expect(media.example.status).toBe(Number(status));
          expect(statusOf(media.example.code), `${method} ${path} ${status}`).toBe(Number(status));
        }
        examples++;
      }
    }
    expect(examples).toBeGreaterThan(30);
  });

  it('declares on every operation the statuses any request can meet', () => {
    for (const [path, method, operation] of operations(document)) {
      const statuses = Object.keys(operation.responses);
      expect(statuses, `${method} ${path}`).toEqual(
        expect.arrayContaining(['400', '408', '413', '417', '431', '500']),
      );
      // No fault flag is on for this server; only a PATCH can meet a failing disk (503).
      expect(statuses, `${method} ${path}`).not.toContain('429');
      if (method !== 'patch') expect(statuses, `${method} ${path}`).not.toContain('503');
    }
    const patch = document.paths['/inventory/{petId}'].patch.responses;
    expect(Object.keys(patch)).toEqual(
      expect.arrayContaining(['200', '400', '401', '404', '405', '413', '415', '503', '507']),
    );
    expect(patch['503'].content['application/json'].example.code).toBe('storage_unavailable');
    for (const method of ['get', 'head'])
      expect(Object.keys(document.paths['/inventory'][method].responses)).toEqual(
        expect.arrayContaining(['200', '304', '401', '405']),
      );
    for (const path of ['/inventory', '/pets/{petId}', '/store/orders'])
      expect(Object.keys(document.paths[path]).sort()).toEqual(['get', 'head']);
  });

  it('declares 429 and 503 when --rate-limit and --fail-rate are on, and is itself exempt from them', async () => {
    const faulty = await startInventoryServer({ port: 0, apiKeys: [KEY], rateLimit: 100, failRate: 1 });
    const described = (await request(`${faulty.baseUrl}/openapi.json`)).json();
    await faulty.close();
    for (const [path, method, operation] of operations(described)) {
      expect(operation.responses['429'], `${method} ${path}`).toBeDefined();
      expect(operation.responses['503'], `${method} ${path}`).toBeDefined();
      if (method !== 'head')
        expect(operation.responses['429'].content['application/json'].example.status).toBe(429);
    }
    expect((await validateDocument(described)).valid).toBe(true);
  });

  it('gives quantity its range and warns about petIds above 2^53', () => {
    const range = { type: 'integer', format: 'int64', minimum: 0, maximum: 2 ** 53 - 1 };
    expect(document.components.schemas.InventoryItem.properties.quantity).toEqual(range);
    expect(document.components.schemas.InventoryUpdate.properties.quantity).toEqual(range);
    const petId = document.paths['/inventory/{petId}'].patch.parameters[0];
    expect(petId.schema).toEqual({ type: 'integer', format: 'int64' });
    expect(petId.description).toMatch(/doubles.*2\^53/);
  });

  it('is written out as the route table, the limits and the handlers have it (openapi.json)', async () => {
    expect(WRITTEN.servers[0]?.url).toBe(DEFAULT_BASE_URL);
    for (const route of ROUTES.filter((described) => described.described)) {
      const item = document.paths[describedPath(route)];
      const written = (WRITTEN.paths as Node)[describedPath(route)];
      const methods = Object.entries(written).map(([method, operation]) => [
        method.toUpperCase(),
        (operation as Node).operationId,
      ]);
      expect(Object.fromEntries(methods), route.pattern).toEqual(route.methods);
      const refused = methodNotAllowed(route);
      for (const operation of Object.values(item) as Node[]) {
        expect(operation.responses['401'] !== undefined, route.pattern).toBe(route.auth);
        expect(operation.responses['405'].headers.Allow.example).toBe(refused.headers.Allow);
        if (operation.responses['405'].content)
          expect(operation.responses['405'].content['application/json'].example.message).toBe(
            refused.message,
          );
      }
    }
    expect(document.components.schemas.PetStatus.enum).toEqual([...PET_STATUSES]);
    const patch = document.paths['/inventory/{petId}'].patch;
    expect(patch.requestBody.description).toContain(`${BODY_LIMIT_BYTES} bytes`);
    for (const [path, method, operation] of operations(document))
      if (method !== 'head')
        expect(
          operation.responses['413'].content['application/json'].example.message,
          `${method} ${path}`,
        ).toBe(`request body exceeds ${BODY_LIMIT_BYTES} bytes`);
    // The 501s say what the handlers answer.
    for (const path of ['/pets/{petId}', '/store/orders']) {
      const answer = await request(`${server.baseUrl}${path.replace('{petId}', '1')}`, {
        headers: bearer(KEY),
      });
      const declared = document.paths[path].get.responses['501'];
      expect(declared.content['application/json'].example).toEqual(answer.json());
      if (path === '/pets/{petId}') {
        expect(answer.headers.deprecation).toBe(PETS_DEPRECATION);
        expect(declared.headers.Deprecation.example).toBe(PETS_DEPRECATION);
      }
    }
  });

  it("lists every error code, and so does serve's page (docs/serve.md)", () => {
    expect(document.components.schemas.Error.properties.code.enum).toEqual([...ERROR_CODES]);
    const page = readFileSync(join(import.meta.dirname, '../../docs/serve.md'), 'utf8');
    for (const code of ERROR_CODES) expect(page, code).toMatch(new RegExp(`\\| \\d{3} +\\| \`${code}\` `));
  });
});
