import { BODY_LIMIT_BYTES } from '../contract/limits';
import { type ErrorCode, statusOf } from './errors';
import { allowedMethods, methodNotAllowed, type Route } from './routes';

/** The pieces the operations of the OpenAPI document share: Error answers, headers, parameters. */

export interface DescribedServer {
  /** The base URL the server really listens on, with the version segment. */
  baseUrl: string;
  /** --rate-limit: 429 is declared only when it is set. */
  rateLimit?: number;
  /** --fail-rate: 503 is declared only when it can fail a request. */
  failRate?: number;
}

export type Responses = Record<string, object>;

export const EXAMPLE_ETAG = '"5d41402a-17"';

/** An Error answer whose example carries `code`, `message` and the code's own status. */
export const errorResponse = (
  description: string,
  code: ErrorCode,
  message: string,
  headers?: Record<string, unknown>,
) => ({
  description,
  ...(headers ? { headers } : {}),
  content: {
    'application/json': {
      schema: { $ref: '#/components/schemas/Error' },
      example: { code, message, status: statusOf(code) },
    },
  },
});

export const unauthorized = errorResponse(
  'API key missing or invalid.',
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

export const retryAfter = {
  'Retry-After': {
    schema: { type: 'integer' },
    description: 'Seconds to wait before retrying.',
    example: 1,
  },
};

/** The 405 of a route, as the router answers it. */
export function methodNotAllowedResponse(route: Route) {
  const answer = methodNotAllowed(route);
  const allow = answer.headers.Allow ?? '';
  return errorResponse(
    `Another method than ${allowedMethods(route).join(' or ')}.`,
    'method_not_allowed',
    answer.message,
    { Allow: { schema: { type: 'string' }, description: 'The methods of this route.', example: allow } },
  );
}

/** What any request can meet below the routes: the HTTP layer, faults, and the --fail-rate/--rate-limit flags. */
export function commonResponses(server: DescribedServer): Responses {
  return {
    '408': errorResponse(
      'The headers or the whole request did not arrive in time (`--headers-timeout`, `--request-timeout`).',
      'request_timeout',
      'the request did not arrive in time',
    ),
    '413': errorResponse(
      'A declared `Content-Length` past 2^64-1, which no request here can carry.',
      'payload_too_large',
      `request body exceeds ${BODY_LIMIT_BYTES} bytes`,
    ),
    '417': errorResponse(
      'An `Expect` header other than `100-continue`.',
      'expectation_failed',
      'Expect "gzip" is not supported; only 100-continue is',
    ),
    '431': errorResponse(
      'Request headers larger than the server accepts.',
      'headers_too_large',
      'the request headers are too large',
    ),
    ...(server.rateLimit === undefined
      ? {}
      : {
          '429': errorResponse(
            'More requests per second than `petinv serve --rate-limit` allows.',
            'rate_limited',
            `more than ${server.rateLimit} requests per second`,
            retryAfter,
          ),
        }),
    '500': errorResponse(
      'An unexpected fault, logged on the server.',
      'internal_error',
      'the server met an unexpected fault; see its log',
    ),
    ...(server.failRate === undefined || server.failRate <= 0
      ? {}
      : {
          '503': errorResponse(
            'A failure injected by `petinv serve --fail-rate`.',
            'unavailable',
            'injected failure (--fail-rate)',
            retryAfter,
          ),
        }),
  };
}

export const malformedRequest = errorResponse(
  'A malformed request: a bad request line or header, Content-Length with Transfer-Encoding, no Host.',
  'malformed_request',
  'an HTTP/1.1 request must carry a Host header',
);

export const petIdParameter = {
  name: 'petId',
  in: 'path',
  required: true,
  description:
    'An int64. JSON parsers that read numbers as doubles (JavaScript, jq) lose ids above 2^53 (9007199254740992): read them as big integers or as text.',
  schema: { type: 'integer', format: 'int64' },
  example: 1,
};
