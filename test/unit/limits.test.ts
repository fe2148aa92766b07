import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_BODY_BYTES } from '../../src/client/defaults';
import { parseBodySize, parseByteSize, resolveLimits } from '../../src/commands/limits';
import { fakeContext } from '../helpers/context';

describe('--max-body-size and --max-retry-wait', () => {
  it('reads sizes in bytes or with K, M, G (powers of 1024)', () => {
    expect(
      ['1', '2048', '64K', '64k', '64KiB', '511M', '256 MB', '512M', '0.5G', '0', '', '1T'].map(
        parseByteSize,
      ),
    ).toEqual([
      1,
      2048,
      65536,
      65536,
      65536,
      511 * 2 ** 20,
      2 ** 28,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it('refuses a size out of range with examples it would accept', () => {
    let message = '';
    try {
      parseBodySize('1G', '--max-body-size');
    } catch (error) {
      message = (error as Error).message;
    }
    const examples = /such as (\S+) or (\S+)$/.exec(message)?.slice(1) ?? [];
    expect(examples).toHaveLength(2);
    for (const example of examples) expect(parseByteSize(example)).toBeDefined();
  });

  it('defaults to 256 MiB and 60 s', () => {
    const limits = resolveLimits({}, fakeContext({}));
    expect(limits).toMatchObject({ maxBodyBytes: 256 * 2 ** 20, maxRetryWaitMs: 60_000 });
    expect(DEFAULT_MAX_BODY_BYTES).toBe(256 * 2 ** 20);
  });

  it('takes the flag over the variable', () => {
    const context = fakeContext({ env: { PETINV_MAX_BODY_SIZE: '1M', PETINV_MAX_RETRY_WAIT: '5' } });
    expect(resolveLimits({}, context)).toMatchObject({ maxBodyBytes: 2 ** 20, maxRetryWaitMs: 5000 });
    // The flags as their declarations parse them: bytes and milliseconds.
    expect(resolveLimits({ maxBodySize: 2 * 2 ** 20, maxRetryWait: 0 }, context)).toMatchObject({
      maxBodyBytes: 2 * 2 ** 20,
      maxRetryWaitMs: 0,
    });
  });

  it('says on a terminal that it waits, and stays quiet in a script', () => {
    const terminal = fakeContext({ tty: true });
    const { onRetryWait } = resolveLimits({}, terminal);
    onRetryWait?.({ operation: 'GET /inventory', ms: 30_000, status: 503, retryAfter: true });
    onRetryWait?.({ operation: 'PATCH /inventory/4', ms: 1500, retryAfter: false });
    onRetryWait?.({ operation: 'GET /inventory', ms: 200, status: 502, retryAfter: false });
    expect(terminal.err()).toBe(
      'petinv: waiting 30s before retrying GET /inventory (503, Retry-After)\npetinv: waiting 2s before retrying PATCH /inventory/4 (no answer)\n',
    );
    expect(resolveLimits({}, fakeContext({ tty: false })).onRetryWait).toBeUndefined();
  });
});
