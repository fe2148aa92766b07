import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/contract/error-codes';
import { ApiError } from '../../src/contract/schemas';
import { type RunningServer, startInventoryServer } from '../../src/server/start';
import { request } from '../helpers/http';
import { type OpenApiDocument, schemaChecker } from '../helpers/openapi';
import { exchange, parseResponse } from '../helpers/raw-http';

/**
 * Some 750 generated requests, well-formed and not, against real servers: every status answered is
 * one the served document declares for that operation, and every error body says the HTTP status.
 */

const KEY = 'property-key';

interface Described {
  server: RunningServer;
  document: OpenApiDocument;
}

async function describedServer(options: { rateLimit?: number; failRate?: number }): Promise<Described> {
  const server = await startInventoryServer({ port: 0, apiKeys: [KEY], seed: 12, ...options });
  const document = (await request(`${server.baseUrl}/openapi.json`)).json();
  return { server, document };
}

let plain: Described;
let faulty: Described;
beforeAll(async () => {
  plain = await describedServer({});
  faulty = await describedServer({ rateLimit: 400, failRate: 0.1 });
});
afterAll(async () => {
  await plain.server.close();
  await faulty.server.close();
});

const petIds = fc.oneof(
  fc.constantFrom('1', '2', '12', '0', '-1', '%31', '%2D1', '%31%32', '9223372036854775807'),
  fc.constantFrom('9223372036854775808', '%zz', '%', '%3', 'abc', '1.5', '01', '1e3', '0x10'),
  fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }).map(String),
  fc.stringMatching(/^[A-Za-z0-9%._~-]{1,12}$/),
);

const paths = fc.oneof(
  fc.constantFrom('/v1/inventory', '/v1/store/orders', '/v1/openapi.json', '/healthz', '/', '/v2/inventory'),
  petIds.map((petId) => `/v1/inventory/${petId}`),
  petIds.map((petId) => `/v1/pets/${petId}`),
  fc.constantFrom('/v1/inventory/1/extra', '/v1/inventory/', '/v1//inventory'),
);

const bodies = fc.oneof(
  fc.constant(undefined),
  fc.integer({ min: -5, max: 50 }).map((quantity) => `{"quantity":${quantity}}`),
  fc.constantFrom(
    '{"quantity":9007199254740992}',
    '{"quantity":1.5}',
    '{"quantity":"5"}',
    '{}',
    'null',
    '[1]',
  ),
  fc.constantFrom('', '   ', '{', '{"quantity":1,"status":"sold"}', 'x'.repeat(5000)),
  fc.string({ maxLength: 40 }),
);

const requests = fc.record({
  method: fc.oneof(
    fc.constantFrom('GET', 'HEAD', 'PATCH'),
    fc.constantFrom('GET', 'HEAD', 'PATCH', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'TRACE', 'BREW'),
  ),
  path: paths,
  query: fc.constantFrom('', '', '?x=1', '?'),
  absolute: fc.boolean(),
  authorization: fc.constantFrom(
    `Bearer ${KEY}`,
    `Bearer ${KEY}`,
    `Bearer ${KEY}`,
    'Bearer wrong',
    'Basic eDp5',
    'Bearer ',
    undefined,
  ),
  contentType: fc.constantFrom(
    'application/json',
    'application/json',
    'application/json; charset=utf-8',
    'application/merge-patch+json',
    'application/json; charset=iso-8859-1',
    'text/plain',
    undefined,
  ),
  contentEncoding: fc.constantFrom(undefined, undefined, undefined, 'identity', 'gzip'),
  ifNoneMatch: fc.constantFrom(undefined, undefined, '*', '"nothing"'),
  expect: fc.constantFrom(undefined, undefined, undefined, '100-continue', 'something-else'),
  host: fc.constantFrom(true, true, true, true, false),
  body: bodies,
});
type GeneratedRequest = typeof requests extends fc.Arbitrary<infer T> ? T : never;

function encode(generated: GeneratedRequest, port: number): Buffer {
  const target = `${generated.absolute ? `http://127.0.0.1:${port}` : ''}${generated.path}${generated.query}`;
  const headers: Array<[string, string | undefined]> = [
    ['Host', generated.host ? `127.0.0.1:${port}` : undefined],
    ['Authorization', generated.authorization],
    ['Content-Type', generated.body === undefined ? undefined : generated.contentType],
    ['Content-Encoding', generated.contentEncoding],
    ['If-None-Match', generated.ifNoneMatch],
    ['Expect', generated.expect],
    ['Content-Length', generated.body === undefined ? undefined : String(Buffer.byteLength(generated.body))],
    ['Connection', 'close'],
  ];
  const head = headers
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return Buffer.from(`${generated.method} ${target} HTTP/1.1\r\n${head}\r\n${generated.body ?? ''}`);
}

/** The document's path of a request path, or undefined for the routes it does not describe. */
function documentPath(path: string): string | undefined {
  if (path === '/v1/inventory') return '/inventory';
  if (/^\/v1\/inventory\/[^/]+$/.test(path)) return '/inventory/{petId}';
  if (/^\/v1\/pets\/[^/]+$/.test(path)) return '/pets/{petId}';
  if (path === '/v1/store/orders') return '/store/orders';
  return undefined;
}

/** The statuses the document allows for this method and path. */
function declaredStatuses(document: OpenApiDocument, method: string, path: string): Set<string> {
  const item = document.paths[documentPath(path) ?? ''];
  // biome-ignore lint/suspicious/noExplicitAny: an operation of the document
  const statusesOf = (operation: any) => Object.keys(operation.responses);
  if (!item) {
    // Outside the routes: 404, or what any request can meet before routing.
    const common = statusesOf(document.paths['/inventory'].get).filter((status) =>
      ['400', '408', '413', '417', '429', '431', '500', '503'].includes(status),
    );
    return new Set(['404', ...common]);
  }
  const operation = item[method.toLowerCase()];
  // Another method than the route's: whatever any of its operations may answer (401, 405, ...).
  return new Set(operation ? statusesOf(operation) : Object.values(item).flatMap(statusesOf));
}

function checkAnswer(described: Described, generated: GeneratedRequest, answer: string) {
  const bodiless = generated.method === 'HEAD';
  const response = parseResponse(answer, bodiless);
  const status = String(response.status);
  const label = `${generated.method} ${generated.path}${generated.query} answered ${status}: ${response.body}`;
  if (generated.path !== '/v1/openapi.json' && generated.path !== '/healthz')
    expect(declaredStatuses(described.document, generated.method, generated.path).has(status), label).toBe(
      true,
    );
  if (response.status >= 400 && !bodiless) {
    expect(response.headers['content-type'], label).toBe('application/json; charset=utf-8');
    const body = ApiError.parse(response.json());
    expect(body.status, label).toBe(response.status);
    expect(ERROR_CODES as readonly string[], label).toContain(body.code);
  }
  if (response.status === 200 && !bodiless && documentPath(generated.path)) {
    const method = generated.method.toLowerCase();
    const operation = described.document.paths[documentPath(generated.path) as string][method];
    validate(
      described.document,
      operation.responses['200'].content['application/json'].schema,
      response.json(),
      label,
    );
  }
}

// biome-ignore lint/suspicious/noExplicitAny: schemas of the document
function validate(document: OpenApiDocument, schema: any, value: unknown, label: string) {
  const check = schemaChecker(document)(schema);
  expect(check(value), `${label}: ${JSON.stringify(check.errors)}`).toBe(true);
}

describe('every answer to a generated request is declared by the served document', () => {
  it.each([
    // Each run of the suite draws new requests: breadth comes from the runs over time, not from one run.
    // At 300 and 150 requests, six runs each met 7 to 9 distinct statuses; these leave room above that.
    ['no fault flags', () => plain, 500],
    ['--rate-limit and --fail-rate', () => faulty, 250],
  ] as const)(
    'with %s',
    async (_name, described, numRuns) => {
      const { server } = described();
      const statuses = new Set<number>();
      await fc.assert(
        fc.asyncProperty(requests, async (generated) => {
          const answer = await exchange(server.port, encode(generated, server.port));
          checkAnswer(described(), generated, answer);
          statuses.add(parseResponse(answer, generated.method === 'HEAD').status);
        }),
        // Bounded in time as well as in runs: a loaded machine runs fewer, never for long.
        { numRuns, interruptAfterTimeLimit: 15_000 },
      );
      // The generator reaches far beyond the happy path. A loaded machine, cut off by the time limit, runs
      // fewer requests and meets the rarest statuses less surely, so the bar leaves room for that.
      expect(statuses.size, [...statuses].sort().join(' ')).toBeGreaterThanOrEqual(6);
    },
    40_000,
  );
});
