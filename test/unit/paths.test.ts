import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cacheDirectory, configDirectory, defaultDataFile } from '../../src/config/paths';

describe.skipIf(process.platform === 'darwin' || process.platform === 'win32')(
  'the XDG base directories',
  () => {
    it('are used when absolute, and ignored when relative (the XDG specification)', () => {
      const env = {
        HOME: '/home/pat',
        XDG_CONFIG_HOME: '/x/config',
        XDG_CACHE_HOME: '/x/cache',
        XDG_DATA_HOME: '/x/data',
      };
      expect(configDirectory(env)).toBe('/x/config/petinv');
      expect(cacheDirectory(env)).toBe('/x/cache/petinv');
      expect(defaultDataFile(env)).toBe('/x/data/petinv/inventory.json');
      const relative = {
        HOME: '/home/pat',
        XDG_CONFIG_HOME: 'config',
        XDG_CACHE_HOME: './cache',
        XDG_DATA_HOME: 'data',
      };
      expect(configDirectory(relative)).toBe(join('/home/pat', '.config', 'petinv'));
      expect(cacheDirectory(relative)).toBe(join('/home/pat', '.cache', 'petinv'));
      expect(defaultDataFile(relative)).toBe(
        join('/home/pat', '.local', 'share', 'petinv', 'inventory.json'),
      );
    });

    it('PETINV_*_DIR still wins', () => {
      const env = { HOME: '/home/pat', PETINV_CONFIG_DIR: 'here', PETINV_DATA_DIR: '/d' };
      expect(configDirectory(env)).toBe('here');
      expect(defaultDataFile(env)).toBe('/d/inventory.json');
    });
  },
);
