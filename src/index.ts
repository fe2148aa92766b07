/** The library surface: what a script author imports. No process, no console. */
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
export { ExitCode, PetinvError } from './errors';
export { type RunningServer, type ServeOptions, startInventoryServer } from './server/start';
export { InventoryStore, seedInventory } from './server/store';
