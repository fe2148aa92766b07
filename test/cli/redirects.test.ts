import { describe, expect, it } from 'vitest';
import { useRawServer } from '../helpers/lying-server';
import { runMain } from '../helpers/main';
import { temporaryDirectory } from '../helpers/serve';

const KEY = 'key-safety-0123456789abcdef';

const freshEnv = (extra: NodeJS.ProcessEnv = {}) => ({ PETINV_CONFIG_DIR: temporaryDirectory(), ...extra });

describe('redirects are not followed', () => {
  let requests = 0;
  let location = '';
  // Raw bytes, so the Location can carry what node:http would refuse to send (a C1 control, latin1).
  const server = useRawServer(({ socket }) => {
    requests++;
    socket.end(
      Buffer.concat([
        Buffer.from('HTTP/1.1 301 Moved Permanently\r\nLocation: '),
        Buffer.from(location, 'latin1'),
        Buffer.from('\r\nContent-Length: 0\r\nConnection: close\r\n\r\n'),
      ]),
    );
  });

  it('names the status and the Location, and suggests env set-url (exit 3), after one request', async () => {
    location = 'https://new.example/v1/inventory';
    requests = 0;
    const result = await runMain(['list', '--env', 'local'], {
      env: freshEnv({ PETINV_BASE_URL: `${server.origin}/v1`, PETINV_API_KEY: KEY }),
    });
    expect(result.code).toBe(3);
    expect(result.stderr).toBe(
      'petinv: the service in local answered GET /inventory with a redirect (301, Location: https://new.example/v1/inventory); petinv does not follow redirects, so the API key goes nowhere else; if the service moved, run: petinv env set-url local https://new.example/v1 (its stored API key, if any, would then go to https://new.example: do so only if you trust it)\n',
    );
    expect(requests).toBe(1);
  });

  it('prints a hostile Location as one clean, bounded line', async () => {
    location = `https://evil.example/\x9b2J\x9b1;1H${'x'.repeat(1000)}`;
    const result = await runMain(['list', '--env', 'local', '--json'], {
      env: freshEnv({ PETINV_BASE_URL: `${server.origin}/v1`, PETINV_API_KEY: KEY }),
    });
    expect(result.code).toBe(3);
    const plain = await runMain(['list', '--env', 'local'], {
      env: freshEnv({ PETINV_BASE_URL: `${server.origin}/v1`, PETINV_API_KEY: KEY }),
    });
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for control characters
    expect(plain.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(plain.stderr.split('\n')).toHaveLength(2);
    // The 8-bit CSI sequences are dropped whole, not left as visible fragments.
    expect(plain.stderr).toContain('Location: https://evil.example/xxx');
    expect(plain.stderr.length).toBeLessThan(600);
    expect(plain.stderr).toContain('petinv env set-url local <url>');
  });
});
