import { PET_STATUSES } from '../api/schemas';
import { BODY_LIMIT_BYTES } from './limits';

/**
 * What `petinv serve` implements, exactly; served at GET /v1/openapi.json. Every parameter, body and
 * response carries an example, so tools that mock or test from the document (Prism, Dredd) need nothing
 * else, and every status this server can answer is declared on each operation that can answer it.
 */

export interface DescribedServer {
  /** The base URL the server really listens on, with the version segment. */
  baseUrl: string;
  /** --rate-limit: 429 is declared only when it is set. */
  rateLimit?: number;
  /** --fail-rate: 503 is declared only when it can fail a request. */
  failRate?: number;
}

/** Every `code` an Error body can carry; the README's table lists the same. */
export const ERROR_CODES = [
  'malformed_request',
  'missing_body',
  'malformed_json',
  'invalid_body',
  'invalid_pet_id',
  'unauthorized',
  'pet_not_found',
  'not_found',
  'method_not_allowed',
  'request_timeout',
  'payload_too_large',
  'unsupported_media_type',
  'expectation_failed',
  'rate_limited',
  'headers_too_large',
  'internal_error',
  'not_implemented',
  'unavailable',
  'insufficient_storage',
  'storage_unavailable',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

const EXAMPLE_ETAG = '"5d41402a-17"';

const errorResponse = (
  description: string,
  status: number,
  code: ErrorCode,
  message: string,
  headers?: Record<string, unknown>,
) => ({
  description,
  ...(headers ? { headers } : {}),
  content: {
    'application/json': {
      schema: { $ref: '#/components/schemas/Error' },
      example: { code, message, status },
    },
  },
});

const unauthorized = errorResponse(
  'API key missing or invalid.',
  401,
  'unauthorized',
  'the API key is not valid',
  {
    'WWW-Authenticate': {
      schema: { type: 'string' },
      description: 'Always `Bearer realm="petinv"`, with `error="invalid_token"` for a wrong key.',
      example: 'Bearer realm="petinv", error="invalid_token"',
    },
  },
);
const retryAfter = {
  'Retry-After': {
    schema: { type: 'integer' },
    description: 'Seconds to wait before retrying.',
    example: 1,
  },
};
const allow = (methods: string) => ({
  Allow: { schema: { type: 'string' }, description: 'The methods of this route.', example: methods },
});

/** What any request can meet below the routes: the HTTP layer, faults, and the --fail-rate/--rate-limit flags. */
function commonResponses(server: DescribedServer) {
  return {
    '408': errorResponse(
      'The headers or the whole request did not arrive in time (`--headers-timeout`, `--request-timeout`).',
      408,
      'request_timeout',
      'the request did not arrive in time',
    ),
    '417': errorResponse(
      'An `Expect` header other than `100-continue`.',
      417,
      'expectation_failed',
      'Expect "gzip" is not supported; only 100-continue is',
    ),
    '431': errorResponse(
      'Request headers larger than the server accepts.',
      431,
      'headers_too_large',
      'the request headers are too large',
    ),
    ...(server.rateLimit === undefined
      ? {}
      : {
          '429': errorResponse(
            'More requests per second than `petinv serve --rate-limit` allows.',
            429,
            'rate_limited',
            `more than ${server.rateLimit} requests per second`,
            retryAfter,
          ),
        }),
    '500': errorResponse(
      'An unexpected fault, logged on the server.',
      500,
      'internal_error',
      'the server met an unexpected fault; see its log',
    ),
    ...(server.failRate === undefined || server.failRate <= 0
      ? {}
      : {
          '503': errorResponse(
            'A failure injected by `petinv serve --fail-rate`.',
            503,
            'unavailable',
            'injected failure (--fail-rate)',
            retryAfter,
          ),
        }),
  };
}

const malformedRequest = errorResponse(
  'A malformed request: a bad request line or header, Content-Length with Transfer-Encoding, no Host.',
  400,
  'malformed_request',
  'an HTTP/1.1 request must carry a Host header',
);

const petIdParameter = {
  name: 'petId',
  in: 'path',
  required: true,
  description:
    'An int64. JSON parsers that read numbers as doubles (JavaScript, jq) lose ids above 2^53 (9007199254740992): read them as big integers or as text.',
  schema: { type: 'integer', format: 'int64' },
  example: 1,
};

/** The HEAD twin of a GET: the same statuses and headers, no body. */
function headOf(operationId: string, get: { responses: Record<string, object> } & Record<string, unknown>) {
  const responses = Object.fromEntries(
    Object.entries(get.responses).map(([status, response]) => {
      const { content: _body, ...rest } = response as { content?: unknown };
      return [status, rest];
    }),
  );
  return { ...get, operationId, summary: `${String(get.summary)} Headers only.`, responses };
}

/** The OpenAPI 3.1 document of a server started with these options. */
export function buildOpenApiDocument(server: DescribedServer) {
  const common = commonResponses(server);
  const listInventory = {
    operationId: 'listInventory',
    summary: 'Stock levels of every pet, in petId order.',
    parameters: [
      {
        name: 'If-None-Match',
        in: 'header',
        required: false,
        description: 'An ETag from an earlier answer: 304 when nothing changed since.',
        schema: { type: 'string' },
        example: EXAMPLE_ETAG,
      },
    ],
    responses: {
      '200': {
        description: 'Every inventory entry.',
        headers: {
          ETag: {
            schema: { type: 'string' },
            description: 'Changes whenever a quantity changes.',
            example: EXAMPLE_ETAG,
          },
        },
        content: {
          'application/json': {
            schema: { type: 'array', items: { $ref: '#/components/schemas/InventoryItem' } },
            example: [
              { petId: 1, quantity: 12, status: 'available' },
              { petId: 2, quantity: 24, status: 'pending' },
            ],
          },
        },
      },
      '304': {
        description: 'If-None-Match named the current ETag: nothing changed.',
        headers: { ETag: { schema: { type: 'string' }, example: EXAMPLE_ETAG } },
      },
      '400': malformedRequest,
      '401': unauthorized,
      '405': errorResponse(
        'Another method than GET or HEAD.',
        405,
        'method_not_allowed',
        'this route allows GET, HEAD',
        allow('GET, HEAD'),
      ),
      ...common,
    },
  };
  const getPet = {
    operationId: 'getPet',
    deprecated: true,
    summary: 'Part of the wider interface; not specified, so not implemented.',
    parameters: [petIdParameter],
    responses: {
      '400': malformedRequest,
      '401': unauthorized,
      '405': errorResponse(
        'Another method than GET or HEAD.',
        405,
        'method_not_allowed',
        'this route allows GET, HEAD',
        allow('GET, HEAD'),
      ),
      '501': errorResponse(
        'Not implemented.',
        501,
        'not_implemented',
        'GET /pets/{petId} is deprecated and its shape is not specified; this server does not implement it',
        {
          Deprecation: {
            schema: { type: 'string' },
            description: 'RFC 9745 deprecation date.',
            example: '@1767225600',
          },
        },
      ),
      ...common,
    },
  };
  const listOrders = {
    operationId: 'listOrders',
    summary: 'Part of the wider interface; not specified, so not implemented.',
    responses: {
      '400': malformedRequest,
      '401': unauthorized,
      '405': errorResponse(
        'Another method than GET or HEAD.',
        405,
        'method_not_allowed',
        'this route allows GET, HEAD',
        allow('GET, HEAD'),
      ),
      '501': errorResponse(
        'Not implemented.',
        501,
        'not_implemented',
        'GET /store/orders is part of the wider interface, but its shape is not specified; this server does not implement it',
      ),
      ...common,
    },
  };

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
    paths: {
      '/inventory': { get: listInventory, head: headOf('headInventory', listInventory) },
      '/inventory/{petId}': {
        patch: {
          operationId: 'updateInventory',
          summary: 'Sets the stock quantity of one pet (experimental). Status is left unchanged.',
          'x-stability': 'experimental',
          parameters: [petIdParameter],
          requestBody: {
            required: true,
            description: `At most ${BODY_LIMIT_BYTES} bytes, UTF-8, without Content-Encoding.`,
            content: {
              'application/json': {
                schema: { $ref: '#/components/schemas/InventoryUpdate' },
                example: { quantity: 7 },
              },
            },
          },
          responses: {
            '200': {
              description: 'The updated entry, acknowledged once it is on disk.',
              content: {
                'application/json': {
                  schema: { $ref: '#/components/schemas/InventoryItem' },
                  example: { petId: 1, quantity: 7, status: 'available' },
                },
              },
            },
            '400': errorResponse(
              'Body missing, malformed JSON, a field missing, unknown or invalid, a petId that is not int64, or a malformed request.',
              400,
              'invalid_body',
              'quantity: must be an integer',
            ),
            '401': unauthorized,
            '404': errorResponse('No such pet.', 404, 'pet_not_found', 'pet 424242 is not in the inventory'),
            '405': errorResponse(
              'Another method than PATCH.',
              405,
              'method_not_allowed',
              'this route allows PATCH',
              allow('PATCH'),
            ),
            '413': errorResponse(
              `A body over ${BODY_LIMIT_BYTES} bytes.`,
              413,
              'payload_too_large',
              `request body exceeds ${BODY_LIMIT_BYTES} bytes`,
            ),
            '415': errorResponse(
              'A Content-Type that is not JSON, a charset other than UTF-8, or a Content-Encoding.',
              415,
              'unsupported_media_type',
              'Content-Type must be application/json, not "text/plain"',
            ),
            '507': errorResponse(
              'The disk is full or the quota exhausted: the update was not written, and not applied.',
              507,
              'insufficient_storage',
              'the server has no space left to record the update; nothing was changed',
            ),
            ...common,
            // A write that fails for another reason can meet any PATCH, whatever the fault flags.
            '503': errorResponse(
              'The update could not be written (an I/O error) and was not applied, or a failure injected by `petinv serve --fail-rate`.',
              503,
              'storage_unavailable',
              'the server could not record the update; nothing was changed',
              retryAfter,
            ),
          },
        },
      },
      '/pets/{petId}': { get: getPet, head: headOf('headPet', getPet) },
      '/store/orders': { get: listOrders, head: headOf('headOrders', listOrders) },
    },
    components: {
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
            quantity: { type: 'integer', format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
            status: { $ref: '#/components/schemas/PetStatus' },
          },
          example: { petId: 1, quantity: 12, status: 'available' },
        },
        InventoryUpdate: {
          type: 'object',
          required: ['quantity'],
          additionalProperties: false,
          properties: {
            quantity: { type: 'integer', format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
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
    },
  };
}
