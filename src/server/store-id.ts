import { readFileSync } from 'node:fs';
import { isStoreId } from '../contract/store-id';
import { writeFileAtomicSync } from '../files/atomic-write';
import { type FileSystem, quietly, randomHex, tryOr } from '../files/file-system';

/** serve's Petinv-Store id, kept in `DATA.store-id` beside a durable data file; in memory, new each start. */
export function openStoreId(dataFile: string | undefined, readOnly: boolean, files?: FileSystem): string {
  if (dataFile === undefined || readOnly) return randomHex(16);
  const path = `${dataFile}.store-id`;
  const kept = tryOr(() => readFileSync(path, 'utf8').trim(), undefined);
  if (isStoreId(kept)) return kept;
  const id = randomHex(16);
  // Not kept when the write fails: this start is a store of its own, as an in-memory one is.
  quietly(() => writeFileAtomicSync(path, `${id}\n`, { files, mode: 0o600 }));
  return id;
}
