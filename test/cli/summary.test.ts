import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { InventoryItem } from '../../src/contract/schemas';
import { bar, LOW_PETS_SHOWN, summarizeInventory } from '../../src/output/summary';
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
      low: {
        atMost: 12,
        pets: items.filter((item) => item.quantity <= 12).length,
        items: items
          .filter((item) => item.quantity <= 12)
          .sort((a, b) => a.quantity - b.quantity || a.petId - b.petId)
          .slice(0, LOW_PETS_SHOWN),
      },
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

  it('names the low pets, lowest first, up to a limit, and says how to list the rest', async () => {
    const items = (await runMain(['list'], { env: served.env })).stdout
      .trim()
      .split('\n')
      .map((line) => line.split('\t'))
      .map(([petId, status, quantity]) => ({ petId: Number(petId), status, quantity: Number(quantity) }));
    const text = (await runMain(['summary', '--low', '10', '--top', '0'], { env: served.env })).stdout;
    const low = items
      .filter((item) => item.quantity <= 10)
      .sort((a, b) => a.quantity - b.quantity || a.petId - b.petId);
    expect(low.length).toBeGreaterThan(0);
    const lines = text.split('\n');
    const heading = lines.indexOf(`At or below 10: ${low.length} pet${low.length === 1 ? '' : 's'}`);
    expect(heading).toBeGreaterThan(0);
    const named = lines.slice(heading + 1, heading + 1 + low.length).map((line) => line.trim().split(/ +/));
    expect(named).toEqual(low.map((item) => [String(item.petId), item.status, String(item.quantity)]));

    // More low pets than the limit: the first LOW_PETS_SHOWN, and a line saying how to see them all.
    const all = await runMain(['summary', '--low', '1000', '--top', '0'], { env: served.env });
    const shown = all.stdout.split('\n');
    const at = shown.indexOf(`At or below 1000: ${items.length} pets`);
    expect(shown.slice(at + 1).filter((line) => /^ +\d/.test(line))).toHaveLength(
      Math.min(items.length, LOW_PETS_SHOWN),
    );
    // The command it suggests reaches the same service (PETINV_ENV names local here), safe to paste.
    expect(items.length).toBeGreaterThan(LOW_PETS_SHOWN);
    expect(all.stdout).toContain(
      `  … and ${items.length - LOW_PETS_SHOWN} more: petinv list --env local --low 1000 --sort quantity\n`,
    );
    const { PETINV_BASE_URL: url, ...unaddressed } = served.env;
    const byFlag = await runMain(['--base-url', url as string, 'summary', '--low', '1000'], {
      env: { ...unaddressed, PETINV_ENV: undefined },
    });
    expect(byFlag.stdout).toContain(`more: petinv list --base-url ${url} --low 1000 --sort quantity\n`);
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
    expect(summary.low).toEqual({ atMost: 0, pets: 1, items: [items[2]] });
    const many = Array.from({ length: 25 }, (_, index) => ({
      petId: BigInt(100 - index),
      quantity: index % 5,
      status: 'sold' as const,
    }));
    const lowest = summarizeInventory(many, 3, 0).low;
    expect(lowest.pets).toBe(20);
    expect(lowest.items).toEqual(
      [...many]
        .filter((item) => item.quantity <= 3)
        .sort((a, b) => a.quantity - b.quantity || Number(a.petId - b.petId))
        .slice(0, LOW_PETS_SHOWN),
    );
    expect(summary.largest.map((item) => item.petId)).toEqual([2n, 5n, 1n]);
    expect(summarizeInventory([], 0, 3).largest).toEqual([]);
  });

  it('draws bars to the eighth of a cell', () => {
    expect(bar(1, 4)).toBe('████');
    expect(bar(0.5, 3)).toBe('█▌');
    expect(bar(0, 10)).toBe('');
  });
});
