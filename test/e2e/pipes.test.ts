import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, startInventoryServer } from '../../src/server/start';
import { cleanEnv, PETINV_BIN, temporaryDirectory } from '../helpers/serve';

const KEY = 'pipes-key';
let server: RunningServer;
let env: NodeJS.ProcessEnv;
let patches = 0;

beforeAll(async () => {
  // Large enough that `petinv list` cannot hand its whole output to a pipe buffer (64 KiB) at once: 50,000
  // pets are about 850 KB of lines, 13 buffers' worth.
  server = await startInventoryServer({
    port: 0,
    apiKeys: [KEY],
    seed: 50_000,
    log: (entry) => {
      if ('method' in entry && entry.method === 'PATCH') patches++;
    },
  });
  env = {
    ...cleanEnv(),
    PETINV_CONFIG_DIR: temporaryDirectory(),
    PETINV_ENV: 'local',
    PETINV_BASE_URL: server.baseUrl,
    PETINV_API_KEY: KEY,
  };
});
afterAll(() => server.close());

interface Closed {
  code: number | null;
  signal: NodeJS.Signals | null;
  firstLine: string;
  stderr: string;
}

/**
 * Runs petinv with stdout (or stderr) read like `| head -1`: the first line, then the pipe is closed.
 * With `closeAtOnce`, the pipe is closed before petinv has even started, like `| true`.
 */
function runIntoClosingPipe(
  args: string[],
  options: { input?: string; closeAtOnce?: boolean; stream?: 'stdout' | 'stderr' } = {},
): Promise<Closed> {
  const child = spawn(process.execPath, [PETINV_BIN, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  const closing = options.stream === 'stderr' ? child.stderr : child.stdout;
  const other = options.stream === 'stderr' ? child.stdout : child.stderr;
  let firstLine = '';
  let stderr = '';
  if (options.closeAtOnce) closing.destroy();
  else
    closing.on('data', (chunk: Buffer) => {
      if (closing.destroyed) return;
      firstLine += chunk.toString();
      if (firstLine.includes('\n')) {
        firstLine = firstLine.slice(0, firstLine.indexOf('\n'));
        closing.destroy();
      }
    });
  other.on('data', (chunk) => {
    stderr += chunk;
  });
  child.stdin.end(options.input ?? '');
  return new Promise((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, firstLine, stderr })),
  );
}

describe('a closed stdout or stderr ends petinv quietly with 141, like SIGPIPE', () => {
  it('petinv list | head -1 on a large store: the first line, then no stack trace and no message', async () => {
    const result = await runIntoClosingPipe(['list']);
    expect(result).toEqual({ code: 141, signal: null, firstLine: '1\tavailable\t12', stderr: '' });
  });

  it.each([[['--help']], [['--version']], [['set', '--help']]])(
    'petinv %j into a pipe closed before it writes',
    async (args) => {
      expect(await runIntoClosingPipe(args, { closeAtOnce: true })).toEqual({
        code: 141,
        signal: null,
        firstLine: '',
        stderr: '',
      });
    },
  );

  it('an error message into a closed stderr', async () => {
    const result = await runIntoClosingPipe(['list', '--status', 'lost'], {
      closeAtOnce: true,
      stream: 'stderr',
    });
    expect(result).toMatchObject({ code: 141, signal: null });
  });

  it('a bulk run whose stdout closes stops starting updates, finishes those in flight, and sums up on stderr', async () => {
    patches = 0;
    const total = 5000;
    const input = Array.from({ length: total }, (_, index) => `${index + 1} 3\n`).join('');
    const result = await runIntoClosingPipe(['set', '-', '--ndjson'], { input });
    expect(result.code).toBe(141);
    expect(JSON.parse(result.firstLine)).toMatchObject({ input: expect.any(Number), ok: true });
    const summary = result.stderr.match(
      /^petinv: stopped early, the output was closed: updated (\d+) of 5000 pets in local in [\d.]+s; \d+ changed, (\d+) already right, (\d+) failed, 0 conflicts, 0 lines skipped, (\d+) not sent\n/,
    );
    expect(summary, result.stderr).not.toBeNull();
    const [updated, alreadyRight, failed, notSent] = (summary as RegExpMatchArray).slice(1).map(Number) as [
      number,
      number,
      number,
      number,
    ];
    expect(notSent).toBeGreaterThan(0);
    // Pets that already hold 3 are not sent: they are already right.
    expect(updated + alreadyRight + failed + notSent).toBe(total);
    // Every update that was started was answered and counted: none was cut off mid-flight.
    expect(patches).toBe(updated + failed);
  });
});
