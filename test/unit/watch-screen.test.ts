import { describe, expect, it } from 'vitest';
import type { InventoryItem } from '../../src/contract/schemas';
import { fitLine, renderWatchScreen, type WatchScreenState } from '../../src/watch/screen';

const ESCAPE = String.fromCharCode(27);
const visible = (line: string) => line.replace(new RegExp(`${ESCAPE}\\[[0-9;]*[A-Za-z]`, 'g'), '');

/** The frame's lines as a terminal shows them: cursor moves and line clears taken out. */
const frameLines = (frame: string) => frame.replace(`${ESCAPE}[H`, '').split('\n').map(visible);

const items: InventoryItem[] = Array.from({ length: 12 }, (_, index) => ({
  petId: BigInt(index + 1),
  quantity: 10 + index,
  status: 'available',
}));

const state: WatchScreenState = {
  view: items,
  marks: new Map([[3n, { petId: 3n, from: 20, to: 12, status: 'available' }]]),
  envName: 'production',
  intervalMs: 2000,
  changedAt: new Date(2026, 10, 22, 8, 9, 53),
  checkedAt: new Date(2026, 10, 22, 8, 9, 59),
  lost: 'cannot reach http://127.0.0.1:4010/v1/inventory in production (ECONNREFUSED) after 4 attempts',
};

describe('renderWatchScreen fits the window', () => {
  it('no line is wider than the window, so none wraps and scrolls the header away', () => {
    for (const color of [false, true]) {
      for (const columns of [80, 60, 40]) {
        const lines = frameLines(renderWatchScreen(state, { color, columns, rows: 10 }));
        expect(lines.length).toBeLessThanOrEqual(10);
        for (const line of lines) expect(line.length).toBeLessThanOrEqual(columns);
        expect(lines[0]).toMatch(/^list --watch · production/);
        expect(lines.at(-1)).toMatch(/^12 pets · 186 units · 7 more below/);
      }
    }
  });

  it('the header fits 80 columns whole, times included, for a host and port too', () => {
    for (const envName of ['production', '127.0.0.1:4010']) {
      const [header] = frameLines(
        renderWatchScreen({ ...state, envName }, { color: false, columns: 80, rows: 10 }),
      );
      expect(header).toMatch(/08:09:59$/);
    }
  });

  it('a line that fits is left whole, colour included', () => {
    const lines = frameLines(renderWatchScreen(state, { color: false, columns: 200, rows: 30 }));
    expect(lines[0]).toBe('list --watch · production · every 2s · changed 08:09:53 · checked 08:09:59');
    expect(lines).toContain('     3  available        12  ▼ was 20');
  });
});

describe('fitLine', () => {
  it('cuts to the visible width, ending in … and a colour reset; colour codes take no room', () => {
    expect(fitLine('abcdef', 6)).toBe('abcdef');
    expect(fitLine('abcdefg', 6)).toBe('abcde…\x1b[0m');
    expect(fitLine('\x1b[1mabcdef\x1b[0m', 6)).toBe('\x1b[1mabcdef\x1b[0m');
    expect(fitLine('\x1b[1mabc\x1b[0mdefg', 6)).toBe('\x1b[1mabc\x1b[0mde…\x1b[0m');
    expect(fitLine('', 6)).toBe('');
  });
});

describe('renderWatchScreen before the first answer', () => {
  it('says what it waits for, with no table and no "0 pets" that reads as an empty inventory', () => {
    const waiting: WatchScreenState = { view: [], marks: new Map(), envName: 'local', intervalMs: 2000 };
    const lines = frameLines(renderWatchScreen(waiting, { color: false, columns: 80, rows: 24 }));
    expect(lines).toEqual([
      'list --watch · local · every 2s · changed — · checked —',
      'waiting for the first answer from local… (Ctrl-C to stop)',
    ]);
    const lost = frameLines(
      renderWatchScreen({ ...waiting, lost: 'ECONNREFUSED' }, { color: false, columns: 80, rows: 24 }),
    );
    expect(lost).toEqual([lines[0], 'connection lost: ECONNREFUSED; still trying']);
  });
});
