import { type ErrorKind, PetinvError, type ServiceErrorBody } from '../errors';
import { parseInventoryJson, serializeUpdate } from './json';
import {
  ApiError,
  describeIssues,
  type InventoryItem,
  InventoryList,
  InventoryItem as ItemSchema,
} from './schemas';
import { type Transport, TransportError, type TransportResponse } from './transport';

export interface ClientOptions {
  /** The service's base address, ending in /v1. */
  baseUrl: string;
  apiKey: string;
  /** The environment's name, for messages that say where something failed. */
  envName?: string;
  /** Per attempt, connection included. */
  timeoutMs?: number;
  /** Further attempts after a network error, a timeout, 429, 502, 503 or 504. */
  retries?: number;
  userAgent?: string;
  /** How requests travel: undiciTransport in petinv, fetchTransport where fetch is intercepted. */
  transport: Transport;
  /** Told once per distinct warning, such as a Deprecation header. */
  onWarning?: (message: string) => void;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

export interface InventoryClient {
  listInventory(): Promise<InventoryItem[]>;
  /** PATCH /inventory/{petId}: sets an absolute quantity, so a retry cannot double-count. */
  updateInventory(petId: bigint, quantity: number): Promise<InventoryItem>;
}

export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_RETRIES = 3;
const RETRYABLE_STATUSES = new Set([429, 502, 503, 504]);
const MAX_RETRY_WAIT_MS = 60_000;

/** When a retry may go: Retry-After (seconds or an HTTP date), else exponential backoff with full jitter. */
export function retryDelayMs(
  attempt: number,
  retryAfter: string | null,
  random: () => number,
  now = Date.now(),
): number {
  if (retryAfter !== null) {
    const seconds = Number(retryAfter);
    const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(retryAfter) - now;
    if (Number.isFinite(ms)) return Math.min(Math.max(ms, 0), MAX_RETRY_WAIT_MS);
  }
  return Math.round(random() * Math.min(200 * 2 ** attempt, 5000));
}

/** Text from a server for one line of a message: no control characters (escape sequences), bounded. */
function oneLine(text: string, max = 200): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  const clean = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ').trim();
  return clean.length > max ? `${clean.slice(0, max)}…` : clean;
}

function kindOfStatus(status: number): ErrorKind {
  if (status === 401 || status === 403) return 'auth';
  if (status === 404) return 'notFound';
  if (status >= 400 && status < 500 && status !== 408 && status !== 429) return 'rejected';
  return 'server';
}

/** The HTTP client of the inventory service: auth, timeouts, retries, and every answer checked against the contract. */
export function createClient(options: ClientOptions): InventoryClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const where = options.envName ?? baseUrl;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const retries = options.retries ?? DEFAULT_RETRIES;
  const { transport } = options;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const random = options.random ?? Math.random;
  const warned = new Set<string>();
  const headers: Record<string, string> = {
    Authorization: `Bearer ${options.apiKey}`,
    Accept: 'application/json',
    ...(options.userAgent ? { 'User-Agent': options.userAgent } : {}),
  };

  function warnOnce(message: string) {
    if (warned.has(message)) return;
    warned.add(message);
    options.onWarning?.(message);
  }

  function noticeDeprecation(operation: string, response: TransportResponse) {
    const deprecation = response.header('deprecation');
    const sunset = response.header('sunset');
    if (deprecation === null && sunset === null) return;
    const parts = [
      deprecation !== null && `Deprecation: ${deprecation}`,
      sunset !== null && `Sunset: ${sunset}`,
    ].filter(Boolean);
    warnOnce(
      `${operation} is deprecated by the service in ${where} (${parts.join('; ')}); it may stop working`,
    );
  }

  function failure(operation: string, status: number, text: string, subject?: string): PetinvError {
    let body: ServiceErrorBody | undefined;
    try {
      const parsed = ApiError.safeParse(JSON.parse(text));
      if (parsed.success) body = parsed.data;
    } catch {
      // Not JSON: described below from the status alone.
    }
    // The HTTP status decides the kind even when the body's own `status` disagrees.
    const kind = kindOfStatus(status);
    const code = body?.code ?? `http_${status}`;
    const detail = body
      ? `${status} ${code}: ${body.message}`
      : `${status}${text.trim() ? `: ${text.trim().slice(0, 200)}` : ''}`;
    const errorBody = { code, message: body?.message ?? `HTTP ${status}`, status };
    switch (kind) {
      case 'auth':
        return new PetinvError(
          kind,
          `the service refused the API key for ${where} (${detail}); run: petinv login --env ${where}`,
          errorBody,
        );
      case 'notFound':
        return subject
          ? new PetinvError(kind, `${subject} not found in ${where} (${detail})`, errorBody)
          : new PetinvError(
              kind,
              `${operation} not found in ${where} (${detail}); check the base URL: petinv env set-url ${where} <url>`,
              errorBody,
            );
      case 'rejected':
        return new PetinvError(kind, `the service rejected ${operation} in ${where} (${detail})`, errorBody);
      default:
        return new PetinvError(
          kind,
          `the service failed ${operation} in ${where} (${detail}); try again later`,
          errorBody,
        );
    }
  }

  /**
   * A redirect is never followed (the Authorization header would go along to wherever it points); the
   * error names where it points and how to move the environment there if the service really moved.
   */
  function redirected(
    operation: string,
    url: string,
    path: string,
    response: TransportResponse,
  ): PetinvError {
    const location = response.header('location');
    let suggestion = '<url>';
    let shown = 'no Location';
    if (location !== null) {
      shown = `Location: ${oneLine(location)}`;
      try {
        const target = new URL(location, url);
        if (target.pathname.endsWith(path) && target.search === '' && /^https?:$/.test(target.protocol))
          suggestion = oneLine(`${target.origin}${target.pathname.slice(0, -path.length)}`);
      } catch {
        // Not a URL: the user picks the new address.
      }
    }
    return new PetinvError(
      'config',
      `the service in ${where} answered ${operation} with a redirect (${response.status}, ${shown}); petinv does not follow redirects, so the API key goes nowhere else; if the service moved, run: petinv env set-url ${where} ${suggestion}`,
      { code: 'redirect', message: `redirect (${response.status}) not followed`, status: response.status },
    );
  }

  async function call(method: string, path: string, body?: string, subject?: string): Promise<string> {
    const operation = `${method} ${path}`;
    const url = `${baseUrl}${path}`;
    for (let attempt = 0; ; attempt++) {
      let response: TransportResponse;
      try {
        response = await transport({
          method,
          url,
          headers: body === undefined ? headers : { ...headers, 'Content-Type': 'application/json' },
          body,
          timeoutMs,
        });
      } catch (error) {
        if (!(error instanceof TransportError)) throw error;
        if (error.reason === 'tls') {
          // The same certificate will be presented again: retrying cannot help.
          throw new PetinvError(
            'network',
            `cannot trust the TLS certificate of ${error.unreachable ?? new URL(url).origin} in ${where}: it presented ${error.detail}; certificates are always checked, against Node's authorities and those in NODE_EXTRA_CA_CERTS (a PEM file: point it at a private authority's certificate)`,
            { code: 'tls' },
          );
        }
        if (attempt < retries) {
          await sleep(retryDelayMs(attempt, null, random));
          continue;
        }
        const attempts = attempt === 0 ? '' : ` after ${attempt + 1} attempts`;
        if (error.reason === 'timeout') {
          throw new PetinvError(
            'server',
            `no answer from ${url} within ${timeoutMs} ms in ${where}${attempts}; raise --timeout or try again later`,
            {
              code: 'timeout',
            },
          );
        }
        const advice = error.unreachable
          ? 'is the proxy up, and the proxy variable right?'
          : 'is the service up and the base URL right? see petinv config';
        throw new PetinvError(
          'network',
          `cannot reach ${error.unreachable ?? url} in ${where} (${error.detail})${attempts}; ${advice}`,
          {
            code: 'network',
          },
        );
      }
      if (RETRYABLE_STATUSES.has(response.status) && attempt < retries) {
        await sleep(retryDelayMs(attempt, response.header('retry-after'), random));
        continue;
      }
      noticeDeprecation(operation, response);
      if (response.status >= 300 && response.status < 400) throw redirected(operation, url, path, response);
      if (response.status < 200 || response.status > 299)
        throw failure(operation, response.status, response.text, subject);
      return response.text;
    }
  }

  function contractError(operation: string, problem: string): PetinvError {
    return new PetinvError(
      'server',
      `the answer from ${where} to ${operation} does not match the contract: ${problem}`,
      {
        code: 'invalid_response',
      },
    );
  }

  function decode<T>(
    operation: string,
    text: string,
    schema: {
      safeParse(
        input: unknown,
      ): { success: true; data: T } | { success: false; error: Parameters<typeof describeIssues>[0] };
    },
  ): T {
    let raw: unknown;
    try {
      raw = parseInventoryJson(text);
    } catch (error) {
      throw contractError(operation, `not JSON (${(error as Error).message})`);
    }
    const parsed = schema.safeParse(raw);
    if (!parsed.success) throw contractError(operation, describeIssues(parsed.error));
    return parsed.data;
  }

  return {
    async listInventory() {
      return decode('GET /inventory', await call('GET', '/inventory'), InventoryList);
    },
    async updateInventory(petId, quantity) {
      const path = `/inventory/${petId}`;
      const item = decode(
        `PATCH ${path}`,
        await call('PATCH', path, serializeUpdate(quantity), `pet ${petId}`),
        ItemSchema,
      );
      if (item.petId !== petId) throw contractError(`PATCH ${path}`, `it answered for pet ${item.petId}`);
      return item;
    },
  };
}
