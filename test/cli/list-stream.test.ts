import { describe, expect, it } from 'vitest';
import { byScenario, cutShort, endless, type Handler, inTurn, useFakeServer } from '../helpers/lying-server';
import { runMain } from '../helpers/main';
import { temporaryDirectory } from '../helpers/serve';

/**
 * The list as it streams, against a service whose answer breaks after a while. Each scenario writes its
 * body in pieces some milliseconds apart, so the client sees them as separate chunks, as it would from a
 * far service.
 */
const item = (petId: number | string, status = 'sold') =>
  `{"petId":${petId},"quantity":1,"status":"${status}"}`;
const items = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => item(from + i)).join(',');

const scenarios: Record<string, Handler> = {
  'cut-mid-item': inTurn([
    `[${items(1, 2000)},`,
    `${items(2001, 2000)},`,
    '{"petId":4001,"qua',
    (r) => r.end(),
  ]),
  'cut-early': (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(`[${item(1)},{"petId":2,"qua`);
  },
  // A short answer that promises more than it sends, then loses its connection.
  'small-cut': cutShort(`[${item(1)},{"petId":2,`),
  'connection-cut': inTurn([`[${items(1, 2000)},`, `${items(2001, 2000)},`, (r) => r.socket?.destroy()]),
  'bad-item-late': inTurn([
    `[${items(1, 2000)},`,
    `${items(2001, 2000)},`,
    `${item(4001, 'lost')}]`,
    (r) => r.end(),
  ]),
  'big-ids': inTurn([
    `[${item('9223372036854775807')},`,
    `${item('9007199254740993')},`,
    `${item('-9223372036854775808')}]`,
    (r) => r.end(),
  ]),
  endless: endless(`${item(1)},`),
};
const hostile = useFakeServer(byScenario(scenarios));

const list = (scenario: string, args: string[] = []) =>
  runMain(['list', '--retries', '0', ...args], {
    env: {
      PETINV_CONFIG_DIR: temporaryDirectory(),
      PETINV_ENV: 'local',
      PETINV_BASE_URL: `${hostile.origin}/${scenario}/v1`,
      PETINV_API_KEY: 'k',
    },
  });

const lines = (text: string) => text.split('\n').slice(0, -1);

describe('petinv list streams the answer', () => {
  it('keeps int64 petIds exact in every format as they stream', async () => {
    expect((await list('big-ids')).stdout).toBe(
      '9223372036854775807\tsold\t1\n9007199254740993\tsold\t1\n-9223372036854775808\tsold\t1\n',
    );
    expect((await list('big-ids', ['--json'])).stdout).toBe(
      `[${item('9223372036854775807')},${item('9007199254740993')},${item('-9223372036854775808')}]\n`,
    );
  });

  it('a body cut mid-item after output began: exit 8, whole lines only, and the output said to be incomplete', async () => {
    const result = await list('cut-mid-item');
    expect(result.code).toBe(8);
    const printed = lines(result.stdout);
    expect(printed.length).toBeGreaterThan(0);
    expect(printed.length).toBeLessThanOrEqual(4000);
    expect(printed).toEqual(printed.map((_, index) => `${index + 1}\tsold\t1`));
    expect(result.stderr).toBe(
      `petinv: the answer from local to GET /inventory does not match the contract: not JSON (the body ends before its array is closed, after 4000 items); the output stops after ${printed.length} pets and is incomplete\n`,
    );
  });

  it('with --json, broken output never parses as a complete document, and the error is JSON', async () => {
    const result = await list('cut-mid-item', ['--json']);
    expect(result.code).toBe(8);
    expect(result.stdout.startsWith(`[${item(1)},`)).toBe(true);
    expect(() => JSON.parse(result.stdout)).toThrow();
    const error = JSON.parse(result.stderr).error;
    expect(error.code).toBe('invalid_response');
    expect(error.message).toMatch(/the output stops after \d+ pets and is incomplete$/);
  });

  it('a body that breaks in its first piece is refused before anything is printed', async () => {
    const result = await list('cut-early');
    expect(result).toEqual({
      code: 8,
      stdout: '',
      stderr:
        'petinv: the answer from local to GET /inventory does not match the contract: not JSON (the body ends before its array is closed, after 1 item)\n',
    });
  });

  it('a connection cut after output began is exit 8, not a retry that would print the list twice', async () => {
    const result = await runMain(['list'], {
      env: {
        PETINV_CONFIG_DIR: temporaryDirectory(),
        PETINV_ENV: 'local',
        PETINV_BASE_URL: `${hostile.origin}/connection-cut/v1`,
        PETINV_API_KEY: 'k',
      },
    });
    expect(result.code).toBe(8);
    const printed = lines(result.stdout);
    expect(new Set(printed).size).toBe(printed.length);
    expect(result.stderr).toMatch(
      /^petinv: the answer from local to GET \/inventory broke off after \d+ items \(.+\); the output stops after \d+ pets and is incomplete\n$/,
    );
  });

  it('a connection cut before anything was printed is a broken answer (exit 8), not an unreachable service', async () => {
    const env = {
      PETINV_CONFIG_DIR: temporaryDirectory(),
      PETINV_ENV: 'local',
      PETINV_BASE_URL: `${hostile.origin}/small-cut/v1`,
      PETINV_API_KEY: 'k',
    };
    // A list reads its answer as it streams; set and get read theirs whole.
    for (const args of [['list'], ['get', '1']]) {
      const result = await runMain([...args, '--retries', '1'], { env });
      expect(result.code).toBe(8);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(
        /^petinv: the answer from local to GET \/inventory broke off before it was complete \(.+\) after 2 attempts\n$/,
      );
    }
    // set's list read (for the history) breaks too, and its PATCH is sent all the same: that answer, cut
    // off, leaves the write's outcome unknown.
    const set = await runMain(['set', '1', '5', '--retries', '1'], { env });
    expect(set.code).toBe(8);
    expect(set.stdout).toBe('');
    expect(set.stderr).toMatch(
      /^petinv: outcome unknown: PATCH \/inventory\/1 was sent to local and its answer broke off before it was complete \(.+\) after 2 attempts; the update may have been applied; setting the same quantity again cannot apply it twice: petinv set 1 5 --env local\n$/,
    );
  });

  it('checks the contract item by item: a bad item after 4000 good ones is exit 8, naming it', async () => {
    const result = await list('bad-item-late', ['--csv']);
    expect(result.code).toBe(8);
    expect(result.stdout.startsWith('petId,status,quantity\n1,sold,1\n')).toBe(true);
    expect(result.stderr).toContain('4000.status: must be one of available, pending, sold');
  });

  it('--limit without --sort stops reading once it has its pets, even from an endless answer', async () => {
    const result = await list('endless', ['--limit', '3', '--ndjson']);
    expect(result).toEqual({ code: 0, stdout: `${item(1)}\n`.repeat(3), stderr: '' });
  });
});
