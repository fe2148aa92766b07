import { describeIssues } from '../contract/issues';
import { parseInventoryJson, readCanonicalItem, serializeUpdate } from '../contract/json';
import { parseQuantity } from '../contract/rules';
import type { InventoryItem } from '../contract/schemas';
import { IF_QUANTITY_HEADER, isStoreId, QUANTITY_HEADER, STORE_HEADER } from '../contract/store-id';
import { PetinvError, QuantityChangedError } from '../errors';
import { ClientErrors } from './client-errors';
import {
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_RETRY_WAIT_MS,
  DEFAULT_RETRIES,
  DEFAULT_TIMEOUT_MS,
} from './defaults';
import type { ListCache } from './list-cache';
import { type InventoryPoll, type ListReading, pollInventory, streamInventory, wholeList } from './list-read';
import { createCall } from './request';
import type { RetryWait } from './retry';
import type { Transport, TransportResponse } from './transport';

export { type RetryWait, retryDelayMs } from './retry';

export interface ClientOptions {
  /** The service's base address, ending in /v1. */
  baseUrl: string;
  apiKey: string;
  /** The environment's name, for messages that say where something failed. */
  envName?: string;
  /**
   * The options that make a suggested command reach this same service, safe to paste (`--env staging`,
   * or `--base-url 'http://…/v1'` when an address, not an environment, chose it); by default `--env envName`.
   */
  targetWords?: string;
  /** An address, not an environment, chose the service: envName is host:port (see ErrorContext). */
  addressed?: boolean;
  /** Per attempt, connection included. */
  timeoutMs?: number;
  /** Further attempts after a network error, a timeout, 429, 502, 503 or 504. */
  retries?: number;
  userAgent?: string;
  /** How requests travel: httpTransport, undiciTransport (an Agent, a ProxyAgent, a MockAgent), or a caller's own. */
  transport: Transport;
  /** A response body larger than this is cut off with an error (default DEFAULT_MAX_BODY_BYTES). */
  maxBodyBytes?: number;
  /** All the waiting between the attempts of one request, Retry-After included; past it, give up. */
  maxRetryWaitMs?: number;
  /** Told before each wait between attempts, as it starts. */
  onRetryWait?: (wait: RetryWait) => void;
  /** Told once per distinct warning, such as a Deprecation header. */
  onWarning?: (message: string) => void;
  /** What to do when the service refuses the key (401, 403); by default, to log in to `envName` again. */
  refusedKeyAdvice?: string;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  /** The last list and its ETag, revalidated by every listInventory (src/client/list-cache.ts); none by default. */
  listCache?: ListCache;
}

export interface InventoryClient {
  /** The whole list, revalidated against the list cache if any; a pet listed twice is a contract error. */
  listInventory(): Promise<InventoryItem[]>;
  /**
   * One pet's item, read from the whole list (the spec has no endpoint for one pet); undefined when the
   * list does not hold it. A pet listed twice is a contract error naming both places: its stock is unknown.
   */
  findInventoryItem(petId: bigint): Promise<InventoryItem | undefined>;
  /** The list only if it changed since `etag` (If-None-Match; a 304 is `changed: false`); no list cache. */
  pollInventory(etag: string | undefined): Promise<InventoryPoll>;
  /**
   * GET /inventory as it arrives: batches of items, each checked against the contract before it is
   * handed out. A failure before the first batch is retried like any other; once a batch was handed
   * out, a failure ends the iteration with a server error (exit 8). Stopping early cancels the answer.
   */
  streamInventory(): AsyncIterable<InventoryItem[]>;
  /**
   * PATCH /inventory/{petId}: sets an absolute quantity, so a retry cannot double-count. With `ifQuantity`,
   * a petinv serve (one that said its store) sets it only if the pet holds that quantity then, and
   * otherwise refuses with a QuantityChangedError; another service has no such condition, and is not sent it.
   */
  updateInventory(petId: bigint, quantity: number, ifQuantity?: number): Promise<InventoryItem>;
  /** The store the service said it serves (Petinv-Store) on its last read; undefined if it never said. */
  readonly storeId: string | undefined;
}

/**
 * An answer's item as the contract's schema reads it, or the contract error naming what is wrong. Loaded
 * only for an answer not in ITEM_FORM: building every schema is about 1 ms of a cold start.
 */
async function decodeItem(errors: ClientErrors, operation: string, text: string): Promise<InventoryItem> {
  const { InventoryItemResponse } = await import('../contract/schemas');
  let raw: unknown;
  try {
    raw = parseInventoryJson(text);
  } catch (error) {
    throw errors.contractError(operation, `not JSON (${(error as Error).message})`);
  }
  const parsed = InventoryItemResponse.safeParse(raw);
  if (!parsed.success) throw errors.contractError(operation, describeIssues(parsed.error));
  return parsed.data;
}

/** The HTTP client of the inventory service: auth, timeouts, retries, and every answer checked against the contract. */
export function createClient(options: ClientOptions): InventoryClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const where = options.envName ?? baseUrl;
  const targetWords = options.targetWords ?? (options.envName ? `--env ${options.envName}` : '');
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  // The service's words reach a terminal and logs: never with the key, should the service echo it.
  const errors = new ClientErrors({
    where,
    addressed: options.addressed,
    secrets: [options.apiKey],
    refusedKeyAdvice: options.refusedKeyAdvice,
    timeoutMs,
    maxBodyBytes,
  });
  let storeId: string | undefined;
  const call = createCall({
    ...options,
    baseUrl,
    where,
    timeoutMs,
    retries: options.retries ?? DEFAULT_RETRIES,
    maxBodyBytes,
    maxRetryWaitMs: options.maxRetryWaitMs ?? DEFAULT_MAX_RETRY_WAIT_MS,
    transport: async (request) => {
      const response = await options.transport(request);
      const id = request.method === 'GET' ? response.header(STORE_HEADER) : null;
      if (isStoreId(id)) storeId = id;
      return response;
    },
    sleep: options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))),
    random: options.random ?? Math.random,
    errors,
  });
  const reading: ListReading = { call, errors, url: `${baseUrl}/inventory`, listCache: options.listCache };
  const findItem = async (petId: bigint) =>
    (await wholeList(errors, streamInventory(reading), (item) => item.petId === petId))[0];

  return {
    get storeId() {
      return storeId;
    },
    streamInventory: () => streamInventory(reading),
    listInventory: () => wholeList(errors, streamInventory(reading)),
    findInventoryItem: findItem,
    pollInventory: (etag) => pollInventory(reading, etag),
    async updateInventory(petId, quantity, ifQuantity) {
      const path = `/inventory/${petId}`;
      const readBack = `petinv get ${petId}${targetWords ? ` ${targetWords}` : ''}`;
      const operation = `PATCH ${path}`;
      const conditional = ifQuantity !== undefined && storeId !== undefined;
      let confirmedItem: InventoryItem | undefined;
      const held = (answer: TransportResponse) => {
        const text = answer.status === 412 ? answer.header(QUANTITY_HEADER.toLowerCase()) : null;
        return text === null ? undefined : parseQuantity(text);
      };
      const response = await call('PATCH', path, serializeUpdate(quantity), `pet ${petId}`, {
        ...(conditional && {
          headers: { [IF_QUANTITY_HEADER]: String(ifQuantity) },
          refused: (answer) => {
            const current = held(answer);
            if (current === undefined) return undefined;
            return new QuantityChangedError(
              `pet ${petId} holds ${current} in ${where}, not ${ifQuantity}: someone changed it since; not set to ${quantity}`,
              current,
            );
          },
        }),
        unknownOutcome: {
          // The body is an absolute quantity: applied twice, it is still that quantity. A write on a condition
          // is not sent again blind, though: a colleague's change since would be overwritten. (The words are
          // safe to paste: numbers, and an environment's name, which is letters, digits, - and _.)
          advice: () =>
            ifQuantity === undefined
              ? `setting the same quantity again cannot apply it twice: petinv set ${petId} ${quantity}${targetWords ? ` ${targetWords}` : ''}`
              : `read it back before writing it again (${quantity} if it was applied, ${ifQuantity} if not, unless someone changed it since): ${readBack}`,
          onSettled: (lost) =>
            options.onWarning?.(
              `pet ${petId} in ${where}: an earlier attempt of ${operation} was sent and got no ${lost.brokeOff ? 'complete ' : ''}answer (${errors.shown(lost.detail)}), so it may have been applied; ${confirmedItem ? `the retry found pet ${petId} holding ${quantity} already (that attempt's doing, or a colleague's), and a read confirms it` : `a retry with the same quantity then succeeded, and a quantity is absolute, so pet ${petId} holds ${quantity} once, not twice`}`,
            ),
          // A retry's condition fails once the lost attempt was applied, and serve names the quantity sent
          // (or a colleague set the same): a read of the pet settles it, with the item to answer.
          confirmsDone: async (answer) => {
            if (!conditional || held(answer) !== quantity) return false;
            confirmedItem = await findItem(petId);
            return confirmedItem?.quantity === quantity;
          },
        },
      });
      if (confirmedItem && response.status === 412) return confirmedItem;
      const { text, status } = response;
      // A success status whose item cannot be believed: the service took the request, so the update may
      // have been applied, and what the pet holds is not known (issue 21).
      const mayHaveApplied = (error: unknown) =>
        error instanceof PetinvError
          ? new PetinvError(
              error.kind,
              `${error.message}; it answered ${status}, so the update may have been applied: read it back with ${readBack}`,
              { code: error.body.code, status },
            )
          : error;
      let item: InventoryItem;
      try {
        item = readCanonicalItem(text) ?? (await decodeItem(errors, operation, text));
      } catch (error) {
        throw mayHaveApplied(error);
      }
      if (item.petId !== petId) {
        // Pipelined, the answers that follow on its connection would be out of step too.
        response.outOfStep?.();
        throw mayHaveApplied(errors.contractError(operation, `it answered for pet ${item.petId}`));
      }
      // The contract's success is 200, its body the entry as updated: a 202 (accepted, which need not mean
      // done), or any other success, does not say the update was made.
      if (status !== 200)
        throw mayHaveApplied(
          errors.contractError(operation, 'a success other than 200, whose item is the update done'),
        );
      if (item.quantity !== quantity)
        throw errors.mismatch(operation, `pet ${petId}`, quantity, item.quantity, status, readBack);
      return item;
    },
  };
}
