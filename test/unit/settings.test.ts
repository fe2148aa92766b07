import { describe, expect, it } from 'vitest';
import type { ConfigFile } from '../../src/config/file';
import { checkBaseUrl, maskKey, resolveSettings } from '../../src/config/settings';
import { wantsColor } from '../../src/output/terminal';

const FILE: ConfigFile = {
  currentEnv: 'staging',
  environments: {
    staging: { baseUrl: 'https://staging.example/v1', apiKey: 'file-staging-key' },
    production: { baseUrl: 'https://prod.example/v1', apiKey: 'file-prod-key' },
  },
};
const PATH = '/cfg/config.json';

describe('precedence: flag > environment variable > config file > default', () => {
  it.each([
    [
      'defaults with no file',
      {},
      {},
      { environments: {} },
      ['production', 'default'],
      [undefined, 'default'],
      [undefined, 'default'],
    ],
    [
      'the file chooses staging',
      {},
      {},
      FILE,
      ['staging', 'config file'],
      ['https://staging.example/v1', 'config file'],
      ['file-staging-key', 'config file'],
    ],
    [
      'PETINV_ENV beats the file',
      {},
      { PETINV_ENV: 'production' },
      FILE,
      ['production', 'environment variable'],
      ['https://prod.example/v1', 'config file'],
      ['file-prod-key', 'config file'],
    ],
    [
      '--env beats PETINV_ENV',
      { env: 'staging' },
      { PETINV_ENV: 'production' },
      FILE,
      ['staging', 'flag'],
      ['https://staging.example/v1', 'config file'],
      ['file-staging-key', 'config file'],
    ],
    [
      'PETINV_BASE_URL and PETINV_API_KEY beat the file',
      {},
      { PETINV_BASE_URL: 'https://env.example/v1', PETINV_API_KEY: 'env-key' },
      FILE,
      ['staging', 'config file'],
      ['https://env.example/v1', 'environment variable'],
      ['env-key', 'environment variable'],
    ],
    [
      '--base-url beats PETINV_BASE_URL',
      { baseUrl: 'https://flag.example/v1' },
      { PETINV_BASE_URL: 'https://env.example/v1' },
      FILE,
      ['staging', 'config file'],
      ['https://flag.example/v1', 'flag'],
      ['file-staging-key', 'config file'],
    ],
    [
      'local has a built-in address',
      { env: 'local' },
      {},
      FILE,
      ['local', 'flag'],
      ['http://127.0.0.1:4010/v1', 'default'],
      [undefined, 'default'],
    ],
    [
      'an empty variable counts as unset',
      {},
      { PETINV_ENV: '', PETINV_API_KEY: '' },
      FILE,
      ['staging', 'config file'],
      ['https://staging.example/v1', 'config file'],
      ['file-staging-key', 'config file'],
    ],
  ])('%s', (_name, flags, env, file, [envName, envSource], [baseUrl, urlSource], [apiKey, keySource]) => {
    const settings = resolveSettings(flags, env as NodeJS.ProcessEnv, file as ConfigFile, PATH);
    expect([settings.env.value, settings.env.source]).toEqual([envName, envSource]);
    expect([settings.baseUrl.value, settings.baseUrl.source]).toEqual([baseUrl, urlSource]);
    expect([settings.apiKey.value, settings.apiKey.source]).toEqual([apiKey, keySource]);
  });
});

describe('checkBaseUrl', () => {
  it('accepts http and https ending in /v1, dropping a trailing slash', () => {
    expect(checkBaseUrl('https://x.example/api/v1/', 'test')).toBe('https://x.example/api/v1');
  });
  it.each(['x.example/v1', 'ftp://x.example/v1', 'https://x.example/v2', 'https://x.example'])(
    'refuses %s',
    (url) => {
      expect(() => checkBaseUrl(url, 'test')).toThrow(/test: /);
    },
  );
});

describe('maskKey', () => {
  it('never shows a whole key', () => {
    expect(maskKey('pk_abcdefghijkl')).toBe('pk_a…kl (15 characters)');
    expect(maskKey('short')).toBe('*****');
  });
});

describe('wantsColor', () => {
  it.each([
    ['a terminal', {}, true, true, true],
    ['a pipe', {}, false, true, false],
    ['--no-color on a terminal', {}, true, false, false],
    ['NO_COLOR on a terminal', { NO_COLOR: '1' }, true, true, false],
    ['an empty NO_COLOR', { NO_COLOR: '' }, true, true, true],
    ['FORCE_COLOR in a pipe', { FORCE_COLOR: '1' }, false, true, true],
    ['FORCE_COLOR=0 on a terminal', { FORCE_COLOR: '0' }, true, true, false],
    ['NO_COLOR beats FORCE_COLOR', { NO_COLOR: '1', FORCE_COLOR: '1' }, false, true, false],
    ['--no-color beats FORCE_COLOR', { FORCE_COLOR: '1' }, false, false, false],
  ])('%s', (_name, env, isTTY, flag, expected) => {
    expect(wantsColor(env, isTTY, flag)).toBe(expected);
  });
});
