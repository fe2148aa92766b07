import type { InventoryItem } from '../contract/schemas';
import { PetinvError } from '../errors';
import type { ClientErrors } from './client-errors';
import { InventoryStreamError, parseInventoryStream } from './inventory-stream';
import { type CachedList, type CacheWriter, copiedInto, type ListCache } from './list-cache';
import type { Call } from './request';
import type { TransportResponse } from './transport';

/** A conditional GET /inventory: the items when they changed since the ETag given, with their new ETag. */
export type InventoryPoll = { changed: false } | { changed: true; items: InventoryItem[]; etag?: string };

const OPERATION = 'GET /inventory';

/** Weak comparison (RFC 9110 8.8.3.2): W/"x" and "x" name the same list. */
const opaqueTag = (etag: string) => etag.trim().replace(/^W\//, '');

/** A 304 that names another ETag than the one asked about: the list is asked for again, whole. */
class StaleTagError extends Error {
  constructor() {
    super(`${OPERATION}: a 304 Not Modified that names another ETag than the one asked about`);
  }
}

export interface ListReading {
  call: Call;
  errors: ClientErrors;
  /** The list's own address, for messages. */
  url: string;
  listCache?: ListCache;
}

/** A body as chunks: a transport that does not stream (a library caller's own) hands over the text. */
const chunksOf = (response: TransportResponse) => response.body ?? [Buffer.from(response.text)];

/** The contract's list is a 200: a 206 or a 202 does not say its body is the whole inventory. */
function refuseOtherSuccess(errors: ClientErrors, response: TransportResponse) {
  if (response.status !== 200)
    throw errors.contractError(
      OPERATION,
      `it answered ${response.status}, where the contract's list is a 200 with every item`,
    );
}

/**
 * Refuses a 304 that names another ETag than the one asked about (`sent`): it speaks of another list (RFC
 * 9111 4.3.4), so the list held is not used. A 304 that names none refers to the request's.
 */
function checkNotModified(response: TransportResponse, sent: string): void {
  const answered = response.header('etag');
  if (answered !== null && opaqueTag(answered) !== opaqueTag(sent)) throw new StaleTagError();
}

/** Throws a parse failure of the list as the contract error it is; any other error as it is. */
const rethrowAsContractError =
  (errors: ClientErrors) =>
  (error: unknown): never => {
    throw error instanceof InventoryStreamError ? errors.contractError(OPERATION, error.message) : error;
  };

/** The list's batches from a body: the answer's as it arrives, or the kept one after a 304. */
async function startList(errors: ClientErrors, chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>) {
  const batches = parseInventoryStream(chunks);
  return { batches, first: await batches.next().catch(rethrowAsContractError(errors)) };
}

/**
 * Opens GET /inventory and takes its first batch: conditional when a list is kept (a 304 reads the kept
 * body through the same checks); a fresh body is copied to the cache, kept once read whole and valid.
 */
async function openList({ call, errors, listCache }: ListReading, kept: CachedList | undefined) {
  return call('GET', '/inventory', undefined, undefined, {
    ifNoneMatch: kept?.etag,
    read: async (response) => {
      if (response.status === 304) {
        const held = kept as CachedList;
        checkNotModified(response, held.etag);
        return { ...(await startList(errors, held.chunks())), fromCache: true };
      }
      refuseOtherSuccess(errors, response);
      const etag = response.header('etag');
      const writer = etag === null ? undefined : listCache?.writer(etag);
      const body = chunksOf(response);
      try {
        return {
          ...(await startList(errors, writer ? copiedInto(body, writer) : body)),
          writer,
          fromCache: false,
        };
      } catch (error) {
        writer?.abort();
        throw error;
      }
    },
  });
}

/** GET /inventory as it arrives, revalidated against the list cache when there is one. */
export async function* streamInventory(
  reading: ListReading,
): AsyncGenerator<InventoryItem[], void, undefined> {
  const { listCache, errors } = reading;
  const kept = listCache?.open();
  // The first batch is taken inside the attempt, so a failure before anything was handed out is
  // retried (or refused) like any other; what follows cannot be taken back.
  const list: Awaited<ReturnType<typeof openList>> & { writer?: CacheWriter } = await openList(reading, kept)
    .catch(async (error: unknown) => {
      const stale = error instanceof StaleTagError;
      if (!kept || !(stale || (error instanceof PetinvError && error.body.code === 'invalid_response')))
        throw error;
      // The kept body no longer reads as a list, or the 304 is about another: forget it, ask for it whole.
      listCache?.drop();
      kept.close();
      return openList(reading, undefined);
    })
    .catch((error: unknown) => {
      kept?.close();
      throw error;
    });
  const { batches, first, writer } = list;
  let handedOut = 0;
  let whole = false;
  try {
    if (!first.done) {
      handedOut += first.value.length;
      yield first.value;
      for await (const batch of batches) {
        handedOut += batch.length;
        yield batch;
      }
    }
    whole = true;
  } catch (error) {
    if (list.fromCache) listCache?.drop();
    throw errors.brokenOff(OPERATION, reading.url, error, handedOut);
  } finally {
    // A consumer that stops early (--limit, a closed pipe) cancels the rest of the body.
    await batches.return();
    if (whole) writer?.commit();
    else writer?.abort();
    kept?.close();
  }
}

/** A pet listed twice breaks the contract: its stock is not known (issue 21). Positions count from 0. */
const listedTwice = (petId: bigint, first: number, second: number) =>
  `pet ${petId} is listed twice, as items ${first} and ${second} (counted from 0), so its stock is not known`;

/** The list's items (those `only` keeps), read to the end: one listed twice, even after a match, is refused. */
export async function wholeList(
  errors: ClientErrors,
  batches: AsyncIterable<InventoryItem[]>,
  only?: (item: InventoryItem) => boolean,
): Promise<InventoryItem[]> {
  const items: InventoryItem[] = [];
  const seen = new Map<bigint, number>();
  let index = 0;
  for await (const batch of batches)
    for (const item of batch) {
      if (only === undefined || only(item)) {
        const first = seen.get(item.petId);
        if (first !== undefined) throw errors.contractError(OPERATION, listedTwice(item.petId, first, index));
        seen.set(item.petId, index);
        items.push(item);
      }
      index++;
    }
  return items;
}

/** The list only if it changed since `etag`; no list cache. A 304 about another list asks again, whole. */
export function pollInventory(reading: ListReading, etag: string | undefined): Promise<InventoryPoll> {
  const { call, errors } = reading;
  return call('GET', '/inventory', undefined, undefined, {
    ifNoneMatch: etag,
    read: async (response): Promise<InventoryPoll> => {
      if (response.status === 304) {
        checkNotModified(response, etag as string);
        return { changed: false };
      }
      refuseOtherSuccess(errors, response);
      const batches = parseInventoryStream(chunksOf(response));
      const items = await wholeList(errors, batches).catch(rethrowAsContractError(errors));
      return { changed: true, items, etag: response.header('etag') ?? undefined };
    },
  }).catch((error: unknown) => {
    if (error instanceof StaleTagError) return pollInventory(reading, undefined);
    throw error;
  });
}
