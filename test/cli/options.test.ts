import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_RETRY_WAIT_MS,
  DEFAULT_RETRIES,
  DEFAULT_TIMEOUT_MS,
} from '../../src/client/defaults';
import { DEFAULT_CONCURRENCY, DEFAULT_PIPELINING } from '../../src/commands/options';
import { DEFAULT_SERVE_HOST, DEFAULT_SERVE_PORT } from '../../src/contract/defaults';
import {
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_SEED_COUNT,
} from '../../src/server/defaults';
import { runMain } from '../helpers/main';

/** Each option is declared once, in src/program/: its parser, its default and what help says of it. */

/** Help with each option on one line, so a description is found whatever the width wraps. */
async function help(args: string[]): Promise<string> {
  const result = await runMain([...args, '--help'], { tty: true, columns: 400 });
  expect(result.code).toBe(0);
  return result.stdout;
}

describe('option declarations', () => {
  it('help states the defaults the code applies, from the same declaration', async () => {
    const program = (await runMain(['help', 'options'], { tty: true, columns: 400 })).stdout;
    expect(program).toContain(
      `per-attempt request timeout in milliseconds (default ${DEFAULT_TIMEOUT_MS})\n`,
    );
    expect(program).toContain(`and 504 (default ${DEFAULT_RETRIES})\n`);
    expect(program).toContain(`(default ${DEFAULT_MAX_BODY_BYTES / 2 ** 20}M; PETINV_MAX_BODY_SIZE)\n`);
    expect(program).toContain(`(default ${DEFAULT_MAX_RETRY_WAIT_MS / 1000}; PETINV_MAX_RETRY_WAIT)\n`);
    const set = await help(['set']);
    expect(set).toContain(`bulk: connections at once (default ${DEFAULT_CONCURRENCY})\n`);
    expect(set).toContain(
      `bulk: updates on each connection at once (default ${DEFAULT_PIPELINING}; 1: none)\n`,
    );
    const serve = await help(['serve']);
    expect(serve).toContain(`(default: "${DEFAULT_SERVE_HOST}")\n`);
    expect(serve).toContain(`(default: "${DEFAULT_SERVE_PORT}")\n`);
    expect(serve).toContain(`pets in a new inventory (default ${DEFAULT_SEED_COUNT})\n`);
    expect(serve).toContain(`headers deadline, else 408 (default ${DEFAULT_HEADERS_TIMEOUT_MS})\n`);
    expect(serve).toContain(`request deadline, else 408 (default ${DEFAULT_REQUEST_TIMEOUT_MS})\n`);
    expect(serve).toContain(`connections in all (default ${DEFAULT_MAX_CONNECTIONS})\n`);
    expect(serve).toContain(`per client (default ${DEFAULT_MAX_CONNECTIONS_PER_CLIENT})\n`);
  });

  it.each([
    [
      ['--timeout', '0', 'list'],
      '--timeout 0: must be a whole number from 1 to 600000 (run petinv help list)',
    ],
    [['--retries', '11', 'list'], '--retries 11: must be a whole number from 0 to 10 (run petinv help list)'],
    [
      ['list', '--limit', '2.5'],
      '--limit 2.5: must be a whole number from 0 to 9007199254740991 (run petinv help list)',
    ],
    [
      ['set', '-', '--concurrency', '0'],
      '--concurrency 0: must be a whole number from 1 to 256 (run petinv help set)',
    ],
    // Short options written together, as commander splits them: -v -e get, and the command is list.
    [
      ['-vetimeout', '--timeout', '0', 'list'],
      '--timeout 0: must be a whole number from 1 to 600000 (run petinv help list)',
    ],
    [
      ['-ve', 'get', '--retries', '11', 'list'],
      '--retries 11: must be a whole number from 0 to 10 (run petinv help list)',
    ],
    [
      ['serve', '--port', '70000'],
      '--port 70000: must be a whole number from 0 to 65535 (run petinv help serve)',
    ],
  ])('%j: the declared parser refuses the value before the command runs (exit 2)', async (args, message) => {
    // The base URL is a closed port: had the command run, it would fail otherwise.
    const result = await runMain(args, {
      env: { PETINV_BASE_URL: 'http://127.0.0.1:9/v1', PETINV_API_KEY: 'k' },
    });
    expect(result).toEqual({ code: 2, stdout: '', stderr: `petinv: ${message}\n` });
  });

  it('a short option takes its value after an =, as kubectl users write it and completion offers it', async () => {
    const written = await runMain(['-e=staging', 'config', '-o=json']);
    const spaced = await runMain(['-e', 'staging', 'config', '-o', 'json']);
    expect(written).toEqual(spaced);
    expect(written.code).toBe(0);
    expect(JSON.parse(written.stdout).env).toMatchObject({ value: 'staging', from: '--env' });
    // An = and nothing after it is an empty value, refused as --env "" is.
    expect((await runMain(['-e=', 'config'])).stderr).toMatch(/^petinv: --env is empty/);
    // -o too: never "--output : must be one of".
    for (const empty of [['-o='], ['-o', ''], ['--output=']])
      expect((await runMain(['config', ...empty])).stderr, empty.join(' ')).toBe(
        'petinv: --output is empty: give it one of table, tsv, csv, json, ndjson, xlsx (run petinv help config)\n',
      );
  });

  it('a bad value of a global option is refused by every command, also one that does not use it', async () => {
    const result = await runMain(['env', '--timeout', '0']);
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr: 'petinv: --timeout 0: must be a whole number from 1 to 600000 (run petinv help env)\n',
    });
  });
});
