import { spawn } from 'node:child_process';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { useInventoryServer } from '../helpers/inventory-server';
import { cleanEnv, PETINV_BIN } from '../helpers/serve';

const KEY = 'bulk-input-key';
const served = useInventoryServer(KEY);

describe('bulk input is read as a stream', () => {
  it('half a million lines (110 MB) in a process whose heap is capped at 24 MB', async () => {
    // Reading the whole input first would need a 110 MB string: V8 would abort. Streamed, memory holds
    // the entries only. --strict with a bad last line reads everything and sends nothing.
    const lines = 500_000;
    const padding = ' '.repeat(200);
    const child = spawn(process.execPath, ['--max-old-space-size=24', PETINV_BIN, 'set', '-', '--strict'], {
      env: { ...cleanEnv(), ...served.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const batch = 10_000;
    for (let first = 1; first <= lines; first += batch) {
      let text = '';
      for (let petId = first; petId < first + batch; petId++)
        text += `${petId}\tavailable\t${petId % 97}${padding}\n`;
      if (!child.stdin.write(text)) await new Promise((resolve) => child.stdin.once('drain', resolve));
    }
    child.stdin.end('not an update\n');
    expect(await exited).toBe(2);
    expect(stderr).toBe(
      'petinv: line 500001: expected "petId quantity", got 3 fields\npetinv: --strict: 1 bad line; nothing was sent (run petinv help set)\n',
    );
  });

  it('bad lines cost their short message, not the line they quote (1,500 lines of 60 KB, heap capped at 48 MB)', async () => {
    // A quoted field was a slice of its line, and V8 keeps the whole line alive behind a slice: 90 MB of
    // bad lines were all held until the end, and the capped heap aborted.
    const child = spawn(process.execPath, ['--max-old-space-size=48', PETINV_BIN, 'set', '-', '--strict'], {
      env: { ...cleanEnv(), ...served.env },
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const line = `${'x'.repeat(60_000)} 1\n`;
    // Without the fix the child aborts mid-input; its stdin then fails with EPIPE, which is the failure.
    child.stdin.on('error', () => {});
    // A first line of data: a first line of names would be a header, refused at once.
    Readable.from(['1 1\n', ...Array.from({ length: 1500 }, () => line)]).pipe(child.stdin);
    expect(await exited).toBe(2);
    expect(stderr.split('\n').slice(-3)).toEqual([
      `petinv: line 1501: petId "${'x'.repeat(39)}…" is not a whole number`,
      'petinv: --strict: 1500 bad lines; nothing was sent (run petinv help set)',
      '',
    ]);
  });
});
