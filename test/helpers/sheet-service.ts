import { execFile, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll } from 'vitest';
import { useInventoryServer } from './inventory-server';
import { runMain } from './main';
import { cleanEnv, PETINV_BIN, temporaryDirectory } from './serve';

/**
 * A petinv serve of exactly these pets (from a data file, so petIds past 2^53 can be among them), with a
 * history of its own and a directory for the sheets a test writes: what the count-sheet tests share.
 */
export function useSheetService(
  key: string,
  pets: readonly { petId: string; quantity: number; status: string }[],
) {
  const dataFile = join(temporaryDirectory(), 'inventory.json');
  const items = pets.map(
    ({ petId, quantity, status }) => `{"petId":${petId},"quantity":${quantity},"status":"${status}"}`,
  );
  writeFileSync(dataFile, `{"format":"petinv-inventory","version":1,"items":[${items.join(',')}]}`);
  const served = useInventoryServer(key, { dataFile });
  let env: NodeJS.ProcessEnv = {};
  let files = '';
  beforeAll(() => {
    files = temporaryDirectory();
    env = { ...served.env, XDG_STATE_HOME: temporaryDirectory() };
  });
  return {
    served,
    petinv: (args: string[], input?: string) => runMain(args, { env, input }),
    /** The built CLI with these bytes on stdin (a workbook is no text), as a person pipes a file in. */
    petinvWithInput: (args: string[], input: Buffer) =>
      new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
        const child = spawn(process.execPath, [PETINV_BIN, ...args], { env: { ...cleanEnv(), ...env } });
        let stderr = '';
        child.stderr.on('data', (chunk) => (stderr += chunk));
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, stderr }));
        child.stdin.end(input);
      }),
    /** The built CLI's stdout as bytes: a workbook is no text. */
    petinvBytes: async (args: string[]): Promise<Buffer> =>
      (
        await promisify(execFile)(process.execPath, [PETINV_BIN, ...args], {
          env: { ...cleanEnv(), ...env },
          encoding: 'buffer',
        })
      ).stdout,
    /** Writes a file into the test's directory; its path. */
    file: (name: string, content: string | Buffer) => {
      const path = join(files, name);
      writeFileSync(path, content);
      return path;
    },
    env: () => env,
    directory: () => files,
  };
}
