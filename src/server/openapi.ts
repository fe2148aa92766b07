import { PET_STATUSES, QUANTITY_MAX } from '../contract/schemas';
import { ERROR_CODES } from './errors';
import { OPERATIONS, type Operation } from './openapi-operations';
import {
  commonResponses,
  type DescribedServer,
  methodNotAllowedResponse,
  petIdParameter,
  type Responses,
  unauthorized,
} from './openapi-responses';
import { API_PREFIX, DESCRIBED_ROUTES, type DescribedRoute, type Route } from './routes';

/**
 * What `petinv serve` implements, exactly; served at GET /v1/openapi.json. Every parameter, body and
 * response carries an example, so tools that mock or test from the document (Prism, Dredd) need nothing
 * else, and every status this server can answer is declared on each operation that can answer it.
 */

export type { DescribedServer } from './openapi-responses';

/** A route's path in the document, whose server URL already ends in API_PREFIX. */
export const describedPath = (route: Route) => route.pattern.slice(API_PREFIX.length);

/** The HEAD twin of a GET: the same statuses and headers, no body; named with `head` for its verb. */
function headOf(get: Operation): Operation {
  const responses = Object.fromEntries(
    Object.entries(get.responses).map(([status, response]) => {
      const { content: _body, ...rest } = response as { content?: unknown };
      return [status, rest];
    }),
  );
  const operationId = get.operationId.replace(/^[a-z]+/, 'head');
  return { ...get, operationId, summary: `${get.summary} Headers only.`, responses };
}

/** The path item of a route: each method's operation with what its route adds, and HEAD beside GET. */
function pathItem(route: DescribedRoute, common: Responses): Record<string, Operation> {
  const item: Record<string, Operation> = {};
  for (const [method, id] of Object.entries(route.methods)) {
    const operation = OPERATIONS[id];
    const responses = {
      ...common,
      ...(route.auth ? { '401': unauthorized } : {}),
      '405': methodNotAllowedResponse(route),
      ...operation.responses,
    };
    item[method.toLowerCase()] = { ...operation, responses };
    if (method === 'GET') item.head = headOf(item.get as Operation);
  }
  return item;
}

/** The schemas and the security scheme the operations refer to. */
const COMPONENTS = {
  securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
  schemas: {
    PetStatus: { type: 'string', enum: [...PET_STATUSES], example: 'available' },
    InventoryItem: {
      type: 'object',
      required: ['petId', 'quantity', 'status'],
      additionalProperties: false,
      properties: {
        petId: {
          type: 'integer',
          format: 'int64',
          description: petIdParameter.description,
        },
        quantity: { type: 'integer', format: 'int64', minimum: 0, maximum: QUANTITY_MAX },
        status: { $ref: '#/components/schemas/PetStatus' },
      },
      example: { petId: 1, quantity: 12, status: 'available' },
    },
    InventoryUpdate: {
      type: 'object',
      required: ['quantity'],
      additionalProperties: false,
      properties: {
        quantity: { type: 'integer', format: 'int64', minimum: 0, maximum: QUANTITY_MAX },
      },
      example: { quantity: 7 },
    },
    Error: {
      type: 'object',
      required: ['code', 'message', 'status'],
      properties: {
        code: { type: 'string', enum: [...ERROR_CODES] },
        message: { type: 'string' },
        status: { type: 'integer', minimum: 400, maximum: 599, description: 'Equals the HTTP status.' },
      },
      example: { code: 'pet_not_found', message: 'pet 424242 is not in the inventory', status: 404 },
    },
  },
};

/** The OpenAPI 3.1 document of a server started with these options. */
export function buildOpenApiDocument(server: DescribedServer) {
  const common = commonResponses(server);
  const paths = Object.fromEntries(
    DESCRIBED_ROUTES.map((route) => [describedPath(route), pathItem(route, common)]),
  );
  return {
    openapi: '3.1.0',
    info: {
      title: 'Pet Store Inventory Service (petinv serve)',
      version: '1.0.0',
      description:
        'The inventory service as implemented offline by `petinv serve`. Operations outside the inventory answer 501. Every error is an Error body whose `status` equals the HTTP status.',
    },
    servers: [{ url: server.baseUrl, description: 'this petinv serve' }],
    security: [{ bearer: [] }],
    paths,
    components: COMPONENTS,
  };
}
