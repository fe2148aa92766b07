/** Where `petinv serve` listens unless told otherwise; the CLI's `local` environment points here. */
export const DEFAULT_SERVE_HOST = '127.0.0.1';
export const DEFAULT_SERVE_PORT = 4010;
export const DEFAULT_BASE_URL = `http://${DEFAULT_SERVE_HOST}:${DEFAULT_SERVE_PORT}/v1`;
