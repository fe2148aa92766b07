import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createProgress, progressLine } from '../../src/output/progress';

/** A terminal stderr of `columns` that keeps what was written. */
function terminal(columns: number | undefined) {
  const stream = Object.assign(new PassThrough(), { isTTY: true, columns, text: '' });
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    stream.text += chunk;
  });
  return stream;
}

const CLEAR = '\r\u001b[K';

describe('progressLine', () => {
  it('shows the count, the rate and the time left, and the failures', () => {
    expect(progressLine(250, 1000, 2, 500, 120)).toBe(
      `[${'#'.repeat(10)}${'-'.repeat(30)}] 250/1000 · 500/s · 0:02 left, 2 failed`,
    );
    expect(progressLine(0, 3, 0, 0, 80)).toBe(`[${'-'.repeat(40)}] 0/3`);
    expect(progressLine(10, 100_000, 0, 1000, 80)).toContain('10/s · 2:46:39 left');
  });

  it('fits the terminal, whatever its width: the bar shrinks, then goes', () => {
    for (const columns of [1, 10, 20, 30, 45, 60, 80, 120, 300]) {
      const line = progressLine(123_456, 1_000_000, 12, 7_000, columns);
      expect(line.length, `${columns} columns: ${line}`).toBeLessThan(Math.max(columns, 1));
    }
    expect(progressLine(123_456, 1_000_000, 12, 7_000, 80)).toBe(
      `[${'#'.repeat(4)}${'-'.repeat(25)}] 123456/1000000 · 17637/s · 0:50 left, 12 failed`,
    );
    expect(progressLine(123_456, 1_000_000, 12, 7_000, 50)).toBe(
      '123456/1000000 · 17637/s · 0:50 left, 12 failed',
    );
    expect(progressLine(123_456, 1_000_000, 12, 7_000, 30)).toBe('123456/1000000, 12 failed');
  });
});

describe('createProgress', () => {
  it('redraws at most every 80 ms, and is cleared at the end for the summary to take its line', () => {
    const stream = terminal(100);
    let clock = 0;
    const progress = createProgress(4, stream, () => clock);
    progress.advance(true); // drawn: the first
    clock = 10;
    progress.advance(false); // too soon
    clock = 100;
    progress.advance(true); // drawn
    progress.finish();
    stream.write('petinv: summary\n');
    const draws = stream.text.split(CLEAR).filter(Boolean);
    expect(draws).toEqual([
      `[${'#'.repeat(10)}${'-'.repeat(30)}] 1/4`,
      `[${'#'.repeat(30)}${'-'.repeat(10)}] 3/4 · 30/s · 0:01 left, 1 failed`,
      'petinv: summary\n',
    ]);
  });

  it('prints a line above the bar, which comes back at the next update', () => {
    const stream = terminal(undefined);
    let clock = 0;
    const progress = createProgress(2, stream, () => clock);
    progress.advance(true);
    progress.print('petinv: line 2: failed\n');
    clock = 1;
    progress.advance(true);
    expect(stream.text.split(CLEAR).filter(Boolean)).toEqual([
      `[${'#'.repeat(20)}${'-'.repeat(20)}] 1/2`,
      'petinv: line 2: failed\n',
      `[${'#'.repeat(40)}] 2/2 · 2000/s · 0:00 left`,
    ]);
  });

  it('draws nothing when stderr is not a terminal, but still prints lines', () => {
    const stream = Object.assign(terminal(80), { isTTY: false });
    const progress = createProgress(2, stream);
    progress.advance(true);
    progress.print('petinv: a message\n');
    progress.finish();
    expect(stream.text).toBe('petinv: a message\n');
  });
});
