import { describe, expect, it } from 'vitest';
import type { ConfigFile } from '../../src/config/file';
import { chooseProxy } from '../../src/config/proxy';
import {
  apiKeyProblem,
  checkBaseUrl,
  checkKeyDestination,
  displayUrl,
  isLoopbackHost,
  maskKey,
  resolveSettings,
} from '../../src/config/settings';
import { PetinvError } from '../../src/errors';
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

/** The error a function throws, for assertions on its kind and message. */
function thrown(work: () => unknown): PetinvError {
  try {
    work();
  } catch (error) {
    if (error instanceof PetinvError) return error;
    throw error;
  }
  throw new Error('expected an error');
}

describe('checkBaseUrl', () => {
  it('accepts http and https ending in /v1, normalised, without a trailing slash', () => {
    expect(checkBaseUrl('https://x.example/api/v1/', 'test')).toBe('https://x.example/api/v1');
    expect(checkBaseUrl('HTTPS://X.Example:443/a/../v1', 'test')).toBe('https://x.example/v1');
    expect(checkBaseUrl('http://[::1]:4010/v1', 'test')).toBe('http://[::1]:4010/v1');
  });
  it.each([
    ['x.example/v1', 'is not a URL'],
    ['ftp://x.example/v1', 'must be an http or https URL'],
    ['https://x.example/v2', 'must end in the version segment /v1'],
    ['https://x.example', 'must end in the version segment /v1'],
    // The text ends in /v1, the parsed path does not.
    ['https://x.example/v2?next=/v1', 'must not have a query'],
    ['https://x.example/v1?', 'must not have a query'],
    ['https://x.example/v2#/v1', 'must not have a fragment'],
    ['https://x.example/v1#', 'must not have a fragment'],
  ])('refuses %s', (url, problem) => {
    const error = thrown(() => checkBaseUrl(url, 'test'));
    expect(error.exitCode).toBe(3);
    expect(error.message).toContain(`test: "${url}" ${problem}`);
  });
  it('refuses a user name or password without ever printing the password', () => {
    for (const url of [
      'https://ops:hunter2@x.example/v1',
      'https://:hunter2@x.example/v1',
      'https://ops@x.example/v1',
    ]) {
      const error = thrown(() => checkBaseUrl(url, 'test'));
      expect(error.exitCode).toBe(3);
      expect(error.message).toContain('must not hold a user name or password');
      expect(error.message).toContain('https://***@x.example/v1');
      expect(error.message).not.toContain('hunter2');
    }
  });
  it('keeps a password out of a URL it cannot parse, and control characters out of any', () => {
    expect(displayUrl('https://ops:hunter 2@x.example/v1')).toBe('https://***@x.example/v1');
    // Escape sequences are dropped whole (they would clear the screen or set the window title).
    expect(displayUrl('https://x.example/\u001b[2J/v1')).toBe('https://x.example//v1');
    expect(displayUrl('https://x.example/\u001b]0;title\u0007/v1')).toBe('https://x.example//v1');
    expect(displayUrl('https://x.example/\u0007/v1')).toBe('https://x.example/\ufffd/v1');
    expect(displayUrl('x'.repeat(500))).toHaveLength(200);
  });
  it('hides credentials written without a scheme, as curl takes user:password@host (a URL parser reads "user:" as the scheme)', () => {
    expect(displayUrl('ops:hunter2@x.example/v1')).toBe('***@x.example/v1');
    expect(displayUrl('ops:hunter2@proxy.example:3128')).toBe('***@proxy.example:3128');
    expect(displayUrl('//ops:hunter2@x.example/v1')).toBe('//***@x.example/v1');
    const error = thrown(() => checkBaseUrl('ops:hunter2@x.example/v1', 'test'));
    expect(error.exitCode).toBe(3);
    expect(error.message).toBe('test: "***@x.example/v1" must be an http or https URL');
  });
});

describe('a stored key goes only to the origin stored with it', () => {
  const file: ConfigFile = {
    environments: {
      staging: { baseUrl: 'https://staging.example/v1', apiKey: 'staging-key' },
      production: { apiKey: 'production-key' },
      local: { apiKey: 'local-key' },
    },
  };
  const check =
    (flags: { env?: string; baseUrl?: string }, env: NodeJS.ProcessEnv = {}) =>
    () => {
      const settings = resolveSettings(flags, env, file, PATH);
      checkKeyDestination(settings, checkBaseUrl(settings.baseUrl.value ?? '', 'test'));
    };

  it('sends it to its own origin, by any path', () => {
    expect(check({ env: 'staging' })).not.toThrow();
    expect(check({ env: 'staging', baseUrl: 'https://staging.example/other/v1' })).not.toThrow();
    expect(check({ env: 'local' })).not.toThrow();
  });
  it('refuses another origin from --base-url or PETINV_BASE_URL, and says how to proceed', () => {
    for (const attempt of [
      check({ env: 'staging', baseUrl: 'https://evil.example/v1' }),
      check({ env: 'staging' }, { PETINV_BASE_URL: 'https://evil.example/v1' }),
      check({ env: 'staging', baseUrl: 'http://staging.example/v1' }),
      check({ env: 'staging', baseUrl: 'https://staging.example:8443/v1' }),
    ]) {
      const error = thrown(attempt);
      expect(error.exitCode).toBe(3);
      expect(error.message).toMatch(
        /^the API key stored for staging belongs to https:\/\/staging\.example; refusing/,
      );
      expect(error.message).toContain('PETINV_API_KEY');
      expect(error.message).toContain('petinv env set-url staging ');
    }
  });
  it("binds local's key to local's built-in address, and a key with no address to none", () => {
    expect(thrown(check({ env: 'local', baseUrl: 'http://127.0.0.1:5000/v1' })).message).toContain(
      'belongs to http://127.0.0.1:4010; refusing to send it to http://127.0.0.1:5000',
    );
    expect(thrown(check({ env: 'production', baseUrl: 'https://prod.example/v1' })).message).toContain(
      'the API key stored for production has no address stored with it',
    );
  });
  it('lets PETINV_API_KEY go wherever the URL points: the user gave both', () => {
    expect(
      check({ env: 'staging', baseUrl: 'https://other.example/v1' }, { PETINV_API_KEY: 'k' }),
    ).not.toThrow();
  });
});

describe('environment names from --env and PETINV_ENV', () => {
  it.each([
    ['flag', { env: 'q\u001b[2Ja' }, {}, '--env'],
    ['variable', {}, { PETINV_ENV: 'x'.repeat(41) }, 'PETINV_ENV'],
  ])(
    'refuses a name env set-url would refuse, from the %s, as a usage error',
    (_from, flags, env, origin) => {
      let caught: unknown;
      try {
        resolveSettings(flags, env, FILE, PATH);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(PetinvError);
      expect((caught as PetinvError).exitCode).toBe(2);
      expect((caught as PetinvError).message).toMatch(
        new RegExp(`^${origin} ".*" is not an environment name`),
      );
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for control characters
      expect((caught as PetinvError).message).not.toMatch(/[\u0000-\u001f]/);
    },
  );
});

describe('apiKeyProblem', () => {
  it('refuses a key longer than any header should carry', () => {
    expect(apiKeyProblem('k'.repeat(4096))).toBeUndefined();
    expect(apiKeyProblem('k'.repeat(4097))).toBe('is longer than the 4096 characters an API key may have');
  });

  it('accepts visible ASCII and names the position of anything else, never the character', () => {
    expect(apiKeyProblem('pk_AZaz09-._~+/=')).toBeUndefined();
    expect(apiKeyProblem('abc def')).toContain('at position 4');
    expect(apiKeyProblem('abc\r\nX-Injected: 1')).toContain('at position 4');
    expect(apiKeyProblem('clé')).toContain('at position 3');
  });
});

describe("isLoopbackHost: one rule for serve's warning and the client's clear-text and proxy checks", () => {
  it.each([
    ['localhost', true],
    ['127.0.0.1', true],
    ['127.3.2.1', true],
    ['[::1]', true],
    ['::1', true],
    ['[::ffff:127.0.0.1]', true],
    ['0.0.0.0', false],
    ['10.0.0.1', false],
    ['127.example.com', false],
    ['localhost.', false],
  ])('%s is loopback: %s', (host, expected) => {
    expect(isLoopbackHost(host)).toBe(expected);
  });
});

describe('maskKey', () => {
  it('shows at most four characters, and only of a key of 16 characters or more', () => {
    expect(maskKey('pk_abcdefghijklm')).toBe('pk_a… (16 characters)');
    expect(maskKey('pk_abcdefghijkl')).toBe('**** (15 characters)');
    expect(maskKey('short')).toBe('**** (5 characters)');
  });
});

describe('chooseProxy', () => {
  const target = (url: string) => new URL(url);
  it('never proxies a loopback service, whatever NO_PROXY says', () => {
    const env = { HTTP_PROXY: 'http://proxy.example:3128', HTTPS_PROXY: 'http://proxy.example:3128' };
    for (const url of [
      'http://127.0.0.1:4010/v1',
      'http://localhost/v1',
      'https://127.9.8.7/v1',
      'http://[::1]:1/v1',
    ]) {
      expect(chooseProxy(target(url), env)).toBeUndefined();
      expect(chooseProxy(target(url), { ...env, NO_PROXY: 'other.example' })).toBeUndefined();
    }
  });
  it('picks the variable for the scheme, lower case too, and honours NO_PROXY', () => {
    const env = { https_proxy: 'http://secure.example:1', HTTP_PROXY: 'http://plain.example:2' };
    expect(chooseProxy(target('https://api.example/v1'), env)).toMatchObject({ variable: 'https_proxy' });
    expect(chooseProxy(target('http://api.example/v1'), env)).toMatchObject({ variable: 'HTTP_PROXY' });
    expect(chooseProxy(target('https://api.example/v1'), { HTTP_PROXY: 'http://p:1' })).toMatchObject({
      variable: 'HTTP_PROXY',
    });
    for (const noProxy of ['api.example', '.example', '*.example', 'x, api.example:443', '*']) {
      expect(chooseProxy(target('https://api.example/v1'), { ...env, NO_PROXY: noProxy })).toBeUndefined();
    }
    expect(
      chooseProxy(target('https://api.example/v1'), { ...env, NO_PROXY: 'api.example:8443' }),
    ).toBeDefined();
    expect(
      chooseProxy(target('https://notapi.example.org/v1'), { ...env, NO_PROXY: 'example' }),
    ).toBeDefined();
  });
  it('refuses a malformed proxy variable as a configuration error naming it, password hidden', () => {
    for (const [value, problem] of [
      ['not a url', 'is not a URL'],
      ['proxy.example:3128', 'is not an http or https proxy'],
      ['socks5://ops:hunter2@proxy.example:1080', 'is not an http or https proxy'],
      ['ops:hunter2@proxy.example:3128', 'is not an http or https proxy'],
      ['http://ops:hunter2@proxy.example:3128/path', 'has a path, query or fragment'],
    ] as const) {
      const error = thrown(() => chooseProxy(target('https://api.example/v1'), { HTTPS_PROXY: value }));
      expect(error.exitCode).toBe(3);
      expect(error.message).toMatch(new RegExp(`^HTTPS_PROXY ".*" ${problem}`));
      expect(error.message).not.toContain('hunter2');
    }
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
    ['TERM=dumb on a terminal', { TERM: 'dumb' }, true, true, false],
    ['FORCE_COLOR beats TERM=dumb', { TERM: 'dumb', FORCE_COLOR: '1' }, true, true, true],
  ])('%s', (_name, env, isTTY, flag, expected) => {
    expect(wantsColor(env, isTTY, flag)).toBe(expected);
  });
});
