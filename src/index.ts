/** The library surface: what a script author imports. No process, no console. */
export { type ClientOptions, createClient, type InventoryClient } from './client/client';
export {
  type Transport,
  TransportError,
  type TransportRequest,
  type TransportResponse,
} from './client/transport';
export { createAgent } from './client/undici';
export { undiciTransport } from './client/undici-transport';
export { parseInventoryJson, serializeItem, serializeItems } from './contract/json';
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
} from './contract/schemas';
export { ExitCode, PetinvError } from './errors';
export { ServeError } from './server/errors';
export { type RunningServer, type ServeOptions, startInventoryServer } from './server/start';
export { InventoryStore, seedInventory } from './server/store';
