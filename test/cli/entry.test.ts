import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { version } from '../../package.json';
import { useInventoryServer } from '../helpers/inventory-server';
import { runMain, startMain } from '../helpers/main';
import { temporaryDirectory } from '../helpers/serve';

/** `main(argv, io)`: the whole CLI in-process, its exit status returned, the process left alone. */

const KEY = 'entry-key';
const served = useInventoryServer(KEY);

/** A stdout whose every write fails with `code`, as a closed pipe (EPIPE) or a full disk (ENOSPC) does. */
function failingStdout(code: string) {
  return new Writable({
    write(_chunk, _encoding, callback) {
      callback(Object.assign(new Error(`write ${code}`), { code }));
    },
  });
}

describe('the CLI entry', () => {
  it('returns the exit status and leaves process.exitCode alone', async () => {
    const result = await runMain(['frobnicate']);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe("petinv: unknown command 'frobnicate' (run petinv help)\n");
    expect(process.exitCode).toBeUndefined();
    expect(await runMain(['--version'])).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it('reads the environment and the streams it is given, not the process', async () => {
    const result = await runMain(['list', '--limit', '1'], { env: served.env });
    expect(result).toEqual({ code: 0, stdout: '1\tavailable\t12\n', stderr: '' });
    const table = await runMain(['list', '--limit', '1'], {
      env: { ...served.env, FORCE_COLOR: '1' },
      tty: true,
    });
    expect(table.stdout).toContain('\u001b[32mavailable\u001b[39m');
    expect((await runMain(['config', 'path'], { env: served.env })).stdout).toBe(
      `${join(String(served.env.PETINV_CONFIG_DIR), 'config.json')}\n`,
    );
  });

  it('wraps help at the terminal width it is told, and at 80 in a pipe', async () => {
    const longest = (text: string) => Math.max(...text.split('\n').map((line) => line.length));
    const wide = longest((await runMain(['--help'], { tty: true, columns: 120 })).stdout);
    expect(wide).toBeGreaterThan(80);
    expect(wide).toBeLessThanOrEqual(120);
    expect(longest((await runMain(['--help'])).stdout)).toBeLessThanOrEqual(80);
  });

  it('a closed stdout (EPIPE) is status 141 and no message', async () => {
    const result = await runMain(['list'], { env: served.env, stdout: failingStdout('EPIPE') });
    expect(result).toEqual({ code: 141, stdout: '', stderr: '' });
  });

  it('any other write failure is said once on stderr, status 1', async () => {
    const result = await runMain(['list'], { env: served.env, stdout: failingStdout('ENOSPC') });
    expect(result).toEqual({ code: 1, stdout: '', stderr: 'petinv: cannot write to stdout: ENOSPC\n' });
  });

  it('an unexpected error: one line and a hint, the stack only with PETINV_DEBUG', async () => {
    // A stdin that breaks when read: a failure no command turns into a PetinvError.
    const brokenStdin = () =>
      new Readable({
        read() {
          this.destroy(new Error('stdin broke'));
        },
      });
    const login = (extra: string[], more: NodeJS.ProcessEnv = {}) =>
      runMain([...extra, 'login', '--env', 'local'], {
        env: { PETINV_CONFIG_DIR: temporaryDirectory(), ...more },
        input: brokenStdin(),
      });
    const plain = await login([]);
    expect(plain.code).toBe(1);
    expect(plain.stderr).toBe(
      'petinv: unexpected error: stdin broke\npetinv: set PETINV_DEBUG=1 for details, and please report it\n',
    );
    const debug = await login([], { PETINV_DEBUG: '1' });
    expect(debug.stderr).toMatch(/^petinv: unexpected error: stdin broke\nError: stdin broke\n\s+at /);
    const json = await login(['--json']);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stderr)).toEqual({
      error: { code: 'internal', message: 'stdin broke', status: null, exitCode: 1 },
    });
  });
});

describe('serve stops on the signals io carries', () => {
  it('SIGTERM: finishes, writes the data, exits 0', async () => {
    const data = join(temporaryDirectory(), 'inventory.json');
    const serve = startMain(['serve', '--json', '--port', '0', '--data', data, '--api-key', KEY, '--quiet'], {
      env: { PETINV_CONFIG_DIR: temporaryDirectory() },
    });
    const ready = JSON.parse(await serve.stderrLine('"event":"listening"'));
    const response = await fetch(`${ready.baseUrl}/inventory/4`, {
      method: 'PATCH',
      headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' },
      body: '{"quantity":404}',
    });
    expect(response.status).toBe(200);
    serve.signals.emit('SIGTERM', 'SIGTERM');
    expect(await serve.exited).toBe(0);
    expect(serve.stderr()).toContain('"event":"stopping","signal":"SIGTERM"}');
    expect(readFileSync(data, 'utf8')).toContain('{"petId":4,"quantity":404,');
  });

  it('a second signal cuts the requests in flight, still writes the data, and exits 10', async () => {
    const data = join(temporaryDirectory(), 'inventory.json');
    const serve = startMain(
      ['serve', '--port', '0', '--data', data, '--api-key', KEY, '--quiet', '--latency', '1000'],
      { env: { PETINV_CONFIG_DIR: temporaryDirectory() } },
    );
    const baseUrl = (await serve.stderrLine('listening on')).match(/listening on (\S+)/)?.[1];
    const inFlight = fetch(`${baseUrl}/inventory`, { headers: { Authorization: `Bearer ${KEY}` } }).catch(
      (error: unknown) => error,
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    serve.signals.emit('SIGTERM', 'SIGTERM');
    await serve.stderrLine('SIGTERM, finishing requests in flight');
    serve.signals.emit('SIGINT', 'SIGINT');
    expect(await serve.exited).toBe(10);
    expect(serve.stderr()).toMatch(/petinv: SIGINT after SIGTERM: requests in flight were cut off\n$/);
    expect(await inFlight).toBeInstanceOf(Error);
  });
});
