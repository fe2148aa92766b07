import { describe, expect, it } from 'vitest';
import { EntryStore } from '../../src/bulk/entries';
import { petList } from '../../src/bulk/results';
import { runBulk } from '../../src/bulk/run';
import { createClient } from '../../src/client/client';
import { TransportError } from '../../src/client/transport';

/**
 * runBulk's early stops, fed the errors the real client makes of what its transport met: here a service
 * gone while a run goes on, whose connections are never accepted (a host down, a full accept queue), so
 * every attempt times out before its request was written.
 */
function clientOf(transport: () => Promise<never>) {
  return createClient({
    baseUrl: 'http://gone.test/v1',
    apiKey: 'k',
    transport,
    envName: 'local',
    retries: 1,
    sleep: async () => {},
    random: () => 0.5,
  });
}

function entries(count: number) {
  const store = new EntryStore();
  for (let line = 1; line <= count; line++) store.push(line, BigInt(line), 5);
  return store;
}

describe('runBulk against a service that stopped answering', () => {
  it('stops after 3 updates in a row that timed out before they were sent, as it does at 3 refused connections', async () => {
    let attempts = 0;
    const client = clientOf(async () => {
      attempts++;
      throw new TransportError('timeout', 'TimeoutError');
    });
    const outcome = await runBulk(entries(100), {
      concurrency: 1,
      update: (entry) => client.updateInventory(entry.petId, entry.quantity),
      onResult: () => {},
    });
    expect(outcome.stop?.reason).toBe('unreachable');
    expect(outcome).toMatchObject({ updated: 0, failed: 3, unknown: 0, notSent: 97 });
    expect(attempts).toBe(6);
  });

  it('one sent and lost, then timeouts before sending: the streak goes on (the service is gone either way)', async () => {
    let calls = 0;
    const client = clientOf(async () => {
      calls++;
      // The first update's attempts were written whole and never answered; every later one never left.
      throw calls <= 2
        ? new TransportError('timeout', 'TimeoutError', undefined, false, true)
        : new TransportError('timeout', 'TimeoutError');
    });
    const outcome = await runBulk(entries(100), {
      concurrency: 1,
      update: (entry) => client.updateInventory(entry.petId, entry.quantity),
      onResult: () => {},
    });
    expect(outcome.stop?.reason).toBe('unreachable');
    expect(outcome).toMatchObject({ failed: 3, unknown: 1, notSent: 97 });
  });
});

describe('conflicts named in a message', () => {
  it('are named by petId, whatever order their answers came in (QA: 1, 6, 2, 3, 44, 5)', () => {
    const conflicts = [1n, 6n, 2n, 3n, 44n, 5n].map((petId, line) => ({
      line,
      petId,
      from: 1,
      current: 2,
      wanted: 3,
    }));
    expect(petList(conflicts)).toBe('1, 2, 3, 5, 6, 44');
  });
});
