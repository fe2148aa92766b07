import { BODY_LIMIT_BYTES } from '../contract/limits';
import { PETS_DEPRECATION } from './handlers';
import {
  EXAMPLE_ETAG,
  errorResponse,
  malformedRequest,
  petIdParameter,
  type Responses,
  retryAfter,
} from './openapi-responses';
import type { DescribedOperationId } from './routes';

/**
 * Each operation of the document with the answers only it gives. What follows from its route (401 where
 * a key is needed, 405 with `Allow`, the HEAD twin of a GET) and what any request can meet are added by
 * the document from the route table.
 */
export type Operation = { operationId: string; summary: string; responses: Responses } & Record<
  string,
  unknown
>;

const listInventory: Operation = {
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
  },
};

const updateInventory: Operation = {
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
      'invalid_body',
      'quantity: must be an integer',
    ),
    '404': errorResponse('No such pet.', 'pet_not_found', 'pet 424242 is not in the inventory'),
    '413': errorResponse(
      `A body over ${BODY_LIMIT_BYTES} bytes.`,
      'payload_too_large',
      `request body exceeds ${BODY_LIMIT_BYTES} bytes`,
    ),
    '415': errorResponse(
      'A Content-Type that is not JSON, a charset other than UTF-8, or a Content-Encoding.',
      'unsupported_media_type',
      'Content-Type must be application/json, not "text/plain"',
    ),
    '507': errorResponse(
      'The disk is full or the quota exhausted: the update was not written, and not applied.',
      'insufficient_storage',
      'the server has no space left to record the update; nothing was changed',
    ),
    // A write that fails for another reason can meet any PATCH, whatever the fault flags.
    '503': errorResponse(
      'The update could not be written (an I/O error) and was not applied, or a failure injected by `petinv serve --fail-rate`.',
      'storage_unavailable',
      'the server could not record the update; nothing was changed',
      retryAfter,
    ),
  },
};

const getPet: Operation = {
  operationId: 'getPet',
  deprecated: true,
  summary: 'Part of the wider interface; not specified, so not implemented.',
  parameters: [petIdParameter],
  responses: {
    '400': malformedRequest,
    '501': errorResponse(
      'Not implemented.',
      'not_implemented',
      'GET /pets/{petId} is deprecated and its shape is not specified; this server does not implement it',
      {
        Deprecation: {
          schema: { type: 'string' },
          description: 'RFC 9745 deprecation date.',
          example: PETS_DEPRECATION,
        },
      },
    ),
  },
};

const listOrders: Operation = {
  operationId: 'listOrders',
  summary: 'Part of the wider interface; not specified, so not implemented.',
  responses: {
    '400': malformedRequest,
    '501': errorResponse(
      'Not implemented.',
      'not_implemented',
      'GET /store/orders is part of the wider interface, but its shape is not specified; this server does not implement it',
    ),
  },
};

export const OPERATIONS: Record<DescribedOperationId, Operation> = {
  listInventory,
  updateInventory,
  getPet,
  listOrders,
};
