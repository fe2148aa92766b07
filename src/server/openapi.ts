import { PET_STATUSES } from '../api/schemas';
import { LOCAL_BASE_URL } from '../config/paths';
import { BODY_LIMIT_BYTES } from './limits';

/** What `petinv serve` implements, exactly; served at GET /v1/openapi.json. */

const errorResponse = (description: string, headers?: Record<string, unknown>) => ({
  description,
  ...(headers ? { headers } : {}),
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

const unauthorized = errorResponse('API key missing or invalid.', {
  'WWW-Authenticate': {
    schema: { type: 'string' },
    description: 'Always `Bearer realm="petinv"`, with `error="invalid_token"` for a wrong key.',
  },
});
const retryAfter = {
  'Retry-After': { schema: { type: 'integer' }, description: 'Seconds to wait before retrying.' },
};
const faults = {
  '429': errorResponse('More requests per second than `petinv serve --rate-limit` allows.', retryAfter),
  '503': errorResponse('A failure injected by `petinv serve --fail-rate`.', retryAfter),
};
const allow = { Allow: { schema: { type: 'string' } } };

export const openApiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'Pet Store Inventory Service (petinv serve)',
    version: '1.0.0',
    description:
      'The inventory service as implemented offline by `petinv serve`. Operations outside the inventory answer 501.',
  },
  servers: [{ url: LOCAL_BASE_URL, description: 'petinv serve on its default address' }],
  security: [{ bearer: [] }],
  paths: {
    '/inventory': {
      get: {
        operationId: 'listInventory',
        summary: 'Stock levels of every pet, in petId order.',
        parameters: [{ name: 'If-None-Match', in: 'header', required: false, schema: { type: 'string' } }],
        responses: {
          '200': {
            description: 'Every inventory entry.',
            headers: {
              ETag: { schema: { type: 'string' }, description: 'Changes whenever a quantity changes.' },
            },
            content: {
              'application/json': {
                schema: { type: 'array', items: { $ref: '#/components/schemas/InventoryItem' } },
              },
            },
          },
          '304': { description: 'If-None-Match named the current ETag: nothing changed.' },
          '401': unauthorized,
          '405': errorResponse('Another method than GET or HEAD.', allow),
          ...faults,
        },
      },
    },
    '/inventory/{petId}': {
      patch: {
        operationId: 'updateInventory',
        summary: 'Sets the stock quantity of one pet (experimental). Status is left unchanged.',
        'x-stability': 'experimental',
        parameters: [
          { name: 'petId', in: 'path', required: true, schema: { type: 'integer', format: 'int64' } },
        ],
        requestBody: {
          required: true,
          description: `At most ${BODY_LIMIT_BYTES} bytes.`,
          content: { 'application/json': { schema: { $ref: '#/components/schemas/InventoryUpdate' } } },
        },
        responses: {
          '200': {
            description: 'The updated entry, acknowledged once it is on disk.',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/InventoryItem' } } },
          },
          '400': errorResponse(
            'Body missing, malformed JSON, a field missing, unknown or invalid, or a petId that is not int64.',
          ),
          '401': unauthorized,
          '404': errorResponse('No such pet.'),
          '405': errorResponse('Another method than PATCH.', allow),
          '413': errorResponse(`A body over ${BODY_LIMIT_BYTES} bytes.`),
          '415': errorResponse('A Content-Type that is not JSON.'),
          ...faults,
        },
      },
    },
    '/pets/{petId}': {
      get: {
        operationId: 'getPet',
        deprecated: true,
        summary: 'Part of the wider interface; not specified, so not implemented.',
        parameters: [
          { name: 'petId', in: 'path', required: true, schema: { type: 'integer', format: 'int64' } },
        ],
        responses: {
          '401': unauthorized,
          '501': errorResponse('Not implemented.', {
            Deprecation: { schema: { type: 'string' }, description: 'RFC 9745 deprecation date.' },
          }),
        },
      },
    },
    '/store/orders': {
      get: {
        operationId: 'listOrders',
        summary: 'Part of the wider interface; not specified, so not implemented.',
        responses: { '401': unauthorized, '501': errorResponse('Not implemented.') },
      },
    },
  },
  components: {
    securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
    schemas: {
      PetStatus: { type: 'string', enum: [...PET_STATUSES] },
      InventoryItem: {
        type: 'object',
        required: ['petId', 'quantity', 'status'],
        additionalProperties: false,
        properties: {
          petId: { type: 'integer', format: 'int64' },
          quantity: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
          status: { $ref: '#/components/schemas/PetStatus' },
        },
      },
      InventoryUpdate: {
        type: 'object',
        required: ['quantity'],
        additionalProperties: false,
        properties: { quantity: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER } },
      },
      Error: {
        type: 'object',
        required: ['code', 'message', 'status'],
        properties: {
          code: {
            type: 'string',
            enum: [
              'missing_body',
              'malformed_json',
              'invalid_body',
              'invalid_pet_id',
              'unauthorized',
              'pet_not_found',
              'not_found',
              'method_not_allowed',
              'payload_too_large',
              'unsupported_media_type',
              'rate_limited',
              'internal_error',
              'not_implemented',
              'unavailable',
            ],
          },
          message: { type: 'string' },
          status: { type: 'integer' },
        },
      },
    },
  },
} as const;
