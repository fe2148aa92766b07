/** Every `code` an Error body can carry, with its status; docs/serve.md and the OpenAPI document list the same. */
const ERROR_STATUS = {
  malformed_request: 400,
  missing_body: 400,
  malformed_json: 400,
  invalid_body: 400,
  invalid_pet_id: 400,
  unauthorized: 401,
  pet_not_found: 404,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  payload_too_large: 413,
  unsupported_media_type: 415,
  quantity_changed: 412,
  expectation_failed: 417,
  rate_limited: 429,
  headers_too_large: 431,
  internal_error: 500,
  not_implemented: 501,
  unavailable: 503,
  insufficient_storage: 507,
  storage_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
export const ERROR_CODES = Object.keys(ERROR_STATUS) as readonly ErrorCode[];

export const statusOf = (code: ErrorCode): number => ERROR_STATUS[code];
