import nock from 'nock';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';

/**
 * nock for the tests of the file that calls this: activated before them, every mock they set used by the
 * end of each, and restored after the file. Test files share their worker (isolate: false): nock
 * activates on its first import only, and restoring it lets the files after this one meet the real fetch
 * and http. Anything nock does not intercept fails the test instead of reaching a network.
 */
export function useNock(): void {
  beforeAll(() => {
    if (!nock.isActive()) nock.activate();
    nock.disableNetConnect();
  });
  afterEach(() => {
    const pending = nock.pendingMocks();
    nock.cleanAll();
    expect(pending).toEqual([]);
  });
  afterAll(() => {
    nock.enableNetConnect();
    nock.restore();
  });
}
