import DOCUMENT from './openapi.json';

/**
 * The document served at GET /v1/openapi.json, written out in openapi.json (test/server/openapi.test.ts
 * holds it to the code). Served, it names the address bound, shared answers are written out in place,
 * each GET gets its HEAD twin, and 429 and 503 are declared only when --rate-limit and --fail-rate apply.
 */

type Response = { $ref?: string; content?: { 'application/json': { example: { message: string } } } };
type Operation = { operationId: string; summary: string; responses: Record<string, Response> };

const { responses: SHARED, ...COMPONENTS } = DOCUMENT.components as typeof DOCUMENT.components & {
  responses: Record<string, Response>;
};
const shared = (ref: string) => SHARED[ref.slice('#/components/responses/'.length)] as Response;

/** The HEAD twin of a GET: the same statuses and headers, no body; named with `head` for its verb. */
function headOf(get: Operation): Operation {
  const responses = Object.fromEntries(
    Object.entries(get.responses).map(([status, { content: _body, ...rest }]) => [status, rest]),
  );
  const operationId = get.operationId.replace(/^[a-z]+/, 'head');
  return { ...get, operationId, summary: `${get.summary} Headers only.`, responses };
}

/** The OpenAPI 3.1 document of a server started with these options (the base URL it really listens on). */
export function buildOpenApiDocument(server: { baseUrl: string; rateLimit?: number; failRate?: number }) {
  const faults: Record<string, Response> = {};
  if (server.rateLimit !== undefined) {
    const limited = structuredClone(shared('#/components/responses/RateLimited'));
    if (limited.content)
      limited.content['application/json'].example.message =
        `more than ${server.rateLimit} requests per second`;
    faults['429'] = limited;
  }
  if (server.failRate !== undefined && server.failRate > 0)
    faults['503'] = shared('#/components/responses/Unavailable');
  const paths = Object.fromEntries(
    Object.entries(DOCUMENT.paths).map(([path, item]) => {
      const described: Record<string, Operation> = {};
      for (const [method, written] of Object.entries(item as Record<string, Operation>)) {
        const responses = Object.entries({ ...faults, ...written.responses }).map(([status, response]) => [
          status,
          response.$ref ? shared(response.$ref) : response,
        ]);
        described[method] = { ...written, responses: Object.fromEntries(responses) };
        if (method === 'get') described.head = headOf(described[method]);
      }
      return [path, described];
    }),
  );
  return {
    ...DOCUMENT,
    servers: [{ url: server.baseUrl, description: 'this petinv serve' }],
    paths,
    components: COMPONENTS,
  };
}
