import { expect, it } from 'vitest';

// Alone in its file, so this import is the module's first evaluation in this worker.
it('importing the CLI entry has no side effects: no exit code, no listener on the process streams', async () => {
  const listeners = () => [process.stdout, process.stderr].map((stream) => stream.listenerCount('error'));
  const before = listeners();
  const { main, processIo } = await import('../../src/cli');
  expect([typeof main, typeof processIo]).toEqual(['function', 'function']);
  expect(listeners()).toEqual(before);
  expect(process.exitCode).toBeUndefined();
});
