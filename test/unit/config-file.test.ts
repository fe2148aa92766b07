import { spawn } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkConfigFile,
  readConfigFile,
  updateConfigFile,
  usualConfigFile,
  withConfigLock,
} from '../../src/config/file';
import { locateJsonSyntaxError } from '../../src/config/json-position';
import { PetinvError } from '../../src/errors';
import { describeLockOwner } from '../../src/files/lock';
import { temporaryDirectory } from '../helpers/serve';

const SECRET = 'sk_live_do_not_print_me_0123456789';

async function failure(work: () => unknown): Promise<PetinvError> {
  try {
    await work();
  } catch (error) {
    if (error instanceof PetinvError) return error;
    throw error;
  }
  throw new Error('expected an error');
}

function configDir(content?: string) {
  const dir = temporaryDirectory();
  if (content !== undefined) writeFileSync(join(dir, 'config.json'), content, { mode: 0o600 });
  return { dir, env: { PETINV_CONFIG_DIR: dir }, file: join(dir, 'config.json') };
}

describe('locateJsonSyntaxError', () => {
  it.each([
    ['{}', undefined],
    ['  [1, -2.5e3, "a\\u00e9\\n", true, null, {"a": {}}]  ', undefined],
    ['{not json', [1, 2, "expected property name or '}'"]],
    ['{\n  "a": 1,\n}', [3, 1, 'expected double-quoted property name']],
    ['{"a": 1', [1, 8, "expected ',' or '}' after property value"]],
    ['{"a" 1}', [1, 6, "expected ':' after property name"]],
    ['[1 2]', [1, 4, "expected ',' or ']' after array element"]],
    // JSON.parse quotes the text here; the place is found by bisection.
    ['{"a": nope}', [1, 8, 'an unexpected character']],
    ['{"a": "x\\q"}', [1, 10, 'bad escaped character']],
    ['{"a": "x\ty"}', [1, 9, 'bad control character in string literal']],
    ['{} {}', [1, 4, 'unexpected non-whitespace character after JSON']],
    ['"never ends', [1, 12, 'unterminated string']],
    ['   ', [1, 4, 'the file ends too early']],
    [`${'['.repeat(100_000)}`, [1, 100_001, 'the file ends too early']],
  ])('%j', (text, expected) => {
    const located = locateJsonSyntaxError(text);
    if (expected === undefined) {
      expect(located).toBeUndefined();
      expect(() => JSON.parse(text)).not.toThrow();
    } else {
      expect(located).toEqual({ line: expected[0], column: expected[1], problem: expected[2] });
      expect(() => JSON.parse(text)).toThrow();
    }
  });
});

describe('locateJsonSyntaxError against JSON.parse', () => {
  it('finds a problem exactly when JSON.parse refuses the text, in words that quote none of it', () => {
    const piece = fc.constantFrom(
      '{',
      '}',
      '[',
      ']',
      ':',
      ',',
      ' ',
      '\n',
      '\f',
      '"a"',
      '"\\q"',
      '"\t"',
      '"',
      '1',
      '-0.5e3',
      '01',
      'true',
      'nul',
      'x',
    );
    const text = fc.oneof(
      fc.json(),
      fc.array(piece, { maxLength: 12 }).map((parts) => parts.join('')),
    );
    fc.assert(
      fc.property(text, (candidate) => {
        let valid = true;
        try {
          JSON.parse(candidate);
        } catch {
          valid = false;
        }
        const located = locateJsonSyntaxError(candidate);
        expect(located === undefined).toBe(valid);
        if (!located) return;
        // Within the text, and its words quote none of it (JSON.parse's own messages may).
        const offset =
          candidate
            .split('\n')
            .slice(0, located.line - 1)
            .join('\n').length + located.column;
        expect(offset).toBeLessThanOrEqual(candidate.length + (located.line > 1 ? 2 : 1));
        expect(located.problem).not.toMatch(/"/);
      }),
      { numRuns: 5000 },
    );
  });
});

describe('a corrupt config file', () => {
  it('is named with its line and column, its content never echoed', async () => {
    const { env, file } = configDir(`{\n  "environments": {\n    "staging": {"apiKey": ${SECRET}}\n  }\n}\n`);
    const error = await failure(() => readConfigFile(env));
    expect(error.exitCode).toBe(3);
    expect(error.message).toBe(
      `config file ${file} is not valid JSON at line 3, column 27: an unexpected character; fix or delete it`,
    );
    expect(error.message).not.toContain('sk_live');
  });

  it('accepts a byte-order mark, as editors on some systems write one', () => {
    const { env } = configDir('\uFEFF{"currentEnv":"staging"}');
    expect(readConfigFile(env).currentEnv).toBe('staging');
  });

  it('refuses a stored base URL with a password, without printing it', async () => {
    const { env } = configDir(
      JSON.stringify({ environments: { staging: { baseUrl: 'https://ops:hunter2@x.example/v1' } } }),
    );
    const error = await failure(() => readConfigFile(env));
    expect(error.message).toContain('environments.staging.baseUrl: must not hold a user name or password');
    expect(error.message).not.toContain('hunter2');
  });

  it('names a field it does not know, at the top the file itself', async () => {
    const { env, file } = configDir('{"foo":1}');
    const error = await failure(() => readConfigFile(env));
    expect(error.message).toBe(
      `config file ${file} is invalid: the file: unknown field "foo"; fix or delete it`,
    );
  });

  it('says what is wrong with a hand-edited name or key, never zod\'s bare "Invalid input"', async () => {
    for (const [content, problem] of [
      [
        '{"environments":{"qa east":{}}}',
        'environments.qa east: is not an environment name: use letters, digits, - and _ (at most 40)',
      ],
      ['{"environments":{"staging":{"apiKey":""}}}', 'environments.staging.apiKey: must not be empty'],
    ]) {
      const { env, file } = configDir(content);
      const error = await failure(() => readConfigFile(env));
      expect(error.message).toBe(`config file ${file} is invalid: ${problem}; fix or delete it`);
    }
  });
});

describe('environment names from the file', () => {
  it('take a name every object has as their own, and the file petinv writes as it is', () => {
    const written = {
      currentEnv: 'constructor',
      environments: { constructor: { baseUrl: 'https://x.example/v1', apiKey: 'k1' }, local: {} },
    };
    const { env } = configDir(JSON.stringify(written));
    const read = readConfigFile(env);
    expect(JSON.stringify(read)).toBe(JSON.stringify(written));
    expect(Object.hasOwn(read.environments, 'constructor')).toBe(true);
  });

  it('are checked as env set-url checks them, and never reach the terminal raw', async () => {
    const evil = 'evil\u001b]0;pwned\u0007\u001b[2J';
    const { env } = configDir(
      JSON.stringify({ currentEnv: evil, environments: { [evil]: { baseUrl: 'https://x.example/v1' } } }),
    );
    const error = await failure(() => readConfigFile(env));
    expect(error.exitCode).toBe(3);
    expect(error.message).toContain('is not an environment name');
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for control characters
    expect(error.message).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
  });
});

describe('ownership and permissions, as ssh checks them', () => {
  it('refuses a config directory or file that others can write, saying how to fix it', async () => {
    const { dir, env, file } = configDir('{}');
    chmodSync(dir, 0o777);
    const open = await failure(() => readConfigFile(env));
    expect(open.exitCode).toBe(3);
    expect(open.message).toBe(
      `config directory ${dir} can be changed by other users (mode 0777); petinv will not trust it: chmod 700 ${dir}`,
    );
    expect((await failure(() => updateConfigFile(() => {}, env))).message).toBe(open.message);
    chmodSync(dir, 0o700);
    chmodSync(file, 0o620);
    expect((await failure(() => readConfigFile(env))).message).toBe(
      `config file ${file} can be changed by other users (mode 0620); petinv will not trust it: chmod 600 ${file}`,
    );
    chmodSync(file, 0o600);
    expect(readConfigFile(env)).toEqual({ environments: {} });
  });

  it.runIf(process.getuid?.() === 0)('refuses a config directory or file another user owns', async () => {
    const { dir, env, file } = configDir('{}');
    chownSync(file, 4242, 4242);
    expect((await failure(() => readConfigFile(env))).message).toBe(
      `config file ${file} belongs to uid 4242, not to you (uid 0); petinv will not trust it: chown 0 ${file}, or set PETINV_CONFIG_DIR to a directory of your own`,
    );
    chownSync(file, 0, 0);
    chownSync(dir, 4242, 4242);
    const error = await failure(() => updateConfigFile(() => {}, env));
    expect(error.message).toContain(`config directory ${dir} belongs to uid 4242, not to you`);
  });
});

describe('a config file that is a symlink', () => {
  it('is read through the link but never written through it', async () => {
    const { dir, env, file } = configDir();
    const elsewhere = join(temporaryDirectory(), 'real.json');
    writeFileSync(elsewhere, '{"currentEnv":"staging"}', { mode: 0o600 });
    symlinkSync(elsewhere, file);
    expect(readConfigFile(env).currentEnv).toBe('staging');
    const error = await failure(() =>
      updateConfigFile((config) => {
        config.currentEnv = 'production';
      }, env),
    );
    expect(error.exitCode).toBe(3);
    expect(error.message).toBe(
      `config file ${file} is a symbolic link; petinv does not write through links: replace the link with a copy of the file it points to, or set PETINV_CONFIG_DIR`,
    );
    expect(readFileSync(elsewhere, 'utf8')).toBe('{"currentEnv":"staging"}');
    expect(readConfigFile(env).currentEnv).toBe('staging');
    // The link is left as it was, and nothing was written beside it: no file in its place, no temporary
    // file, no lock left held.
    expect(lstatSync(file).isSymbolicLink()).toBe(true);
    expect(readlinkSync(file)).toBe(elsewhere);
    expect(readdirSync(dir)).toEqual(['config.json']);
  });
});

describe('a config directory petinv cannot write', () => {
  it('is a configuration error naming it', async () => {
    const { file } = configDir('{}');
    const error = await failure(() =>
      updateConfigFile(() => {}, { PETINV_CONFIG_DIR: join(file, 'petinv') }),
    );
    expect(error.exitCode).toBe(3);
    expect(error.message).toMatch(
      /^cannot use config directory .*config\.json\/petinv \(ENOTDIR\)$|^cannot write config directory .*config\.json\/petinv \(ENOTDIR\)/,
    );
  });
});

describe('the config lock', () => {
  it('makes a writer wait while another holds it', async () => {
    const { env, file } = configDir('{}');
    let release = () => {};
    let holding = () => {};
    const held = new Promise<void>((resolve) => {
      holding = resolve;
    });
    const holder = withConfigLock(`${file}.lock`, async () => {
      holding();
      await new Promise<void>((resolve) => {
        release = resolve;
      });
    });
    await held;
    let written = false;
    const writer = updateConfigFile((config) => {
      config.currentEnv = 'staging';
    }, env).then(() => {
      written = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(written).toBe(false);
    expect(readConfigFile(env).currentEnv).toBeUndefined();
    release();
    await Promise.all([holder, writer]);
    expect(readConfigFile(env).currentEnv).toBe('staging');
  });

  it('takes over a lock whose process died, and gives up on a live holder with a message', async () => {
    const dir = temporaryDirectory();
    const lock = join(dir, 'config.json.lock');
    const dead = spawn(process.execPath, ['-e', '']);
    await new Promise((resolve) => dead.on('exit', resolve));
    const { hostname } = await import('node:os');
    writeFileSync(lock, `${dead.pid}\n${hostname()}\n`);
    expect(await withConfigLock(lock, () => 'ran', { waitMs: 1000 })).toBe('ran');

    // A live process stands in for another petinv holding the lock: its record, as it would write it.
    const live = spawn('sleep', ['30'], { stdio: 'ignore' });
    writeFileSync(lock, describeLockOwner(live.pid ?? 0));
    const error = await failure(() => withConfigLock(lock, () => 'ran', { waitMs: 30 }));
    live.kill();
    expect(error.exitCode).toBe(3);
    expect(error.message).toBe(
      `the config file is locked by pid ${live.pid} on ${hostname()} (${lock}); try again, or delete the lock file if no petinv is running`,
    );
    mkdirSync(join(dir, 'unused'));
  });
});
describe('the config file checked by hand', () => {
  const name = fc.oneof(
    fc.constantFrom('production', 'staging', 'local', 'my-env_2', 'x'.repeat(40)),
    fc.constantFrom('', 'a b', 'x'.repeat(41), '__proto__', 'constructor', 'toString', 'é', 'a\u200b'),
    fc.string({ maxLength: 6 }),
  );
  const baseUrl = fc.constantFrom(
    'https://petstore.example.com/v1',
    'http://127.0.0.1:8080/v1/',
    'https://x.example/api/v1//',
    'ftp://x.example/v1',
    'https://user:pw@x.example/v1',
    'https://x.example/v2',
    'https://x.example/v1?',
    'https://x.example/v1#top',
    'not a url',
    '',
  );
  const value = fc.oneof(fc.string({ maxLength: 4 }), fc.integer(), fc.constant(null), fc.boolean());
  const environment = fc.oneof(
    fc.record(
      { baseUrl: fc.oneof(baseUrl, value), apiKey: fc.oneof(fc.constantFrom('k', 'sk_live_1'), value) },
      { requiredKeys: [] },
    ),
    fc.dictionary(fc.constantFrom('baseUrl', 'apiKey', 'other'), fc.oneof(baseUrl, value)),
    value,
    fc.array(value, { maxLength: 2 }),
  );
  const file = fc.oneof(
    fc.record(
      {
        currentEnv: fc.oneof(name, value),
        environments: fc.oneof(fc.dictionary(name, environment, { maxKeys: 4 }), value),
      },
      { requiredKeys: [] },
    ),
    fc.dictionary(fc.constantFrom('currentEnv', 'environments', 'extra'), fc.oneof(name, value)),
    value,
    fc.array(value, { maxLength: 2 }),
  );

  it('accepts only what the schema accepts, and gives what it gives', () => {
    let accepted = 0;
    fc.assert(
      fc.property(file, (raw) => {
        // As read from a file: what JSON.parse makes of it (a __proto__ key becomes a property).
        const parsed: unknown = JSON.parse(JSON.stringify(raw));
        const usual = usualConfigFile(parsed);
        const schema = checkConfigFile(parsed);
        if (usual === undefined) return;
        accepted++;
        expect(schema.success).toBe(true);
        // Not toStrictEqual: it compares .constructor, which an environment named "constructor" replaces.
        expect(usual).toEqual(schema.data);
        expect(JSON.stringify(usual)).toBe(JSON.stringify(schema.data));
      }),
      { numRuns: 3000 },
    );
    // The generator reaches the files it takes, not only the ones it leaves to the schema.
    expect(accepted).toBeGreaterThan(100);
  });

  it('takes the files petinv writes without the schema', () => {
    const written = {
      currentEnv: 'staging',
      environments: {
        production: { baseUrl: 'https://petstore.example.com/v1', apiKey: 'k1' },
        staging: { baseUrl: 'https://staging.example.com/v1' },
        local: { apiKey: 'k2' },
      },
    };
    expect(usualConfigFile(written)).toStrictEqual(written);
    expect(usualConfigFile({})).toStrictEqual({ environments: {} });
    expect(usualConfigFile({ environments: { local: {} } })).toStrictEqual({ environments: { local: {} } });
  });
});
