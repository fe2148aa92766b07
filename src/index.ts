/** The library surface: what a script author imports. No process, no console. */
export { type ClientOptions, createClient, type InventoryClient } from './api/client';
export { parseInventoryJson, serializeItem, serializeItems } from './api/json';
export {
  ApiError,
  INT64_MAX,
  INT64_MIN,
  InventoryItem,
  InventoryList,
  InventoryUpdate,
  PetId,
  PetStatus,
  parsePetId,
} from './api/schemas';
export {
  fetchTransport,
  type Transport,
  TransportError,
  type TransportRequest,
  type TransportResponse,
} from './api/transport';
export { createAgent } from './api/undici';
export { undiciTransport } from './api/undici-transport';
export { ExitCode, PetinvError } from './errors';
export { ServeError } from './server/errors';
export { type RunningServer, type ServeOptions, startInventoryServer } from './server/start';
export { InventoryStore, seedInventory } from './server/store';
