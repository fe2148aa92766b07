import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { InventoryItem } from '../../src/contract/schemas';
import { bar, summarizeInventory } from '../../src/output/summary';
import { useInventoryServer } from '../helpers/inventory-server';
import { runMain } from '../helpers/main';

const served = useInventoryServer('summary-key');
// Without escape sequences, so a line's width on screen can be measured.
const visible = (line: string) => stripVTControlCharacters(line);

describe('petinv summary', () => {
  it('--json gives pets and units per status, low stock and the largest stocks as one object', async () => {
    const items = JSON.parse((await runMain(['list', '--json'], { env: served.env })).stdout) as {
      petId: number;
      quantity: number;
      status: 'available' | 'pending' | 'sold';
    }[];
    const result = await runMain(['summary', '--json', '--low', '12', '--top', '3'], { env: served.env });
    expect(result.code).toBe(0);
    expect(result.stdout.trim().split('\n')).toHaveLength(1);
    const summary = JSON.parse(result.stdout);
    const of = (status: string) => items.filter((item) => item.status === status);
    const sum = (list: typeof items) => list.reduce((total, item) => total + item.quantity, 0);
    expect(summary).toEqual({
      env: 'local',
      pets: items.length,
      units: sum(items),
      statuses: Object.fromEntries(
        ['available', 'pending', 'sold'].map((status) => [
          status,
          { pets: of(status).length, units: sum(of(status)) },
        ]),
      ),
      low: { atMost: 12, pets: items.filter((item) => item.quantity <= 12).length },
      largest: [...items].sort((a, b) => b.quantity - a.quantity || a.petId - b.petId).slice(0, 3),
    });
  });

  it('draws a bar chart of units per status on a terminal, in colour, within its width', async () => {
    for (const columns of [50, 120]) {
      const result = await runMain(['summary'], { env: served.env, tty: true, columns });
      expect(result.code).toBe(0);
      const lines = result.stdout.split('\n');
      const bars = lines.filter((line) => line.includes('█'));
      expect(bars).toHaveLength(3);
      for (const line of lines) expect(visible(line).length).toBeLessThanOrEqual(columns);
      expect(Math.max(...bars.map((line) => visible(line).length))).toBeGreaterThan(columns - 3);
      expect(result.stdout).toContain('\x1b[32m');
    }
    const piped = await runMain(['summary'], { env: served.env });
    expect(piped.stdout).not.toContain('█');
    expect(piped.stdout).not.toContain('\x1b[');
    expect(piped.stdout).toMatch(/^12 pets · \d+ units · local\n/);
  });
});

describe('summarizeInventory', () => {
  it('sums units exactly past 2^53, counts low stock and keeps the largest stocks, ties by petId', () => {
    const max = Number.MAX_SAFE_INTEGER;
    const items: InventoryItem[] = [
      { petId: 5n, quantity: max, status: 'sold' },
      { petId: 2n, quantity: max, status: 'sold' },
      { petId: 3n, quantity: 0, status: 'available' },
      { petId: 4n, quantity: 7, status: 'pending' },
      { petId: 1n, quantity: 7, status: 'pending' },
    ];
    const summary = summarizeInventory(items, 0, 3);
    expect(summary.units).toBe(2n * BigInt(max) + 14n);
    expect(summary.statuses.sold).toEqual({ pets: 2, units: 2n * BigInt(max) });
    expect(summary.low).toEqual({ atMost: 0, pets: 1 });
    expect(summary.largest.map((item) => item.petId)).toEqual([2n, 5n, 1n]);
    expect(summarizeInventory([], 0, 3).largest).toEqual([]);
  });

  it('draws bars to the eighth of a cell', () => {
    expect(bar(1, 4)).toBe('████');
    expect(bar(0.5, 3)).toBe('█▌');
    expect(bar(0, 10)).toBe('');
  });
});
