import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeServer, startFakeServer } from '../helpers/lying-server';
import { runMain } from '../helpers/main';
import { type LoggingProxy, startLoggingProxy } from '../helpers/proxy';
import { closedPort, runPetinv, temporaryDirectory } from '../helpers/serve';
import { hasOpenssl, makeCertificate } from '../helpers/tls';

const KEY = 'key-safety-0123456789abcdef';
const ITEMS = '[{"petId":1,"quantity":2,"status":"available"}]';

/** A tiny inventory service that records every request it gets, with its Authorization header. */
function recordingHandler(seen: string[]) {
  return (req: IncomingMessage, res: ServerResponse) => {
    seen.push(`${req.method} ${req.url} ${req.headers.authorization ?? '-'}`);
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(ITEMS);
  };
}

const freshEnv = (extra: NodeJS.ProcessEnv = {}) => ({ PETINV_CONFIG_DIR: temporaryDirectory(), ...extra });

describe.skipIf(!hasOpenssl)('TLS failures', () => {
  const serve = async (cert: { key: string; cert: string }) => {
    let connections = 0;
    const server = await startFakeServer(recordingHandler([]), { tls: cert });
    server.server.on('connection', () => connections++);
    return { ...server, connections: () => connections };
  };
  const list = (port: number, extra: NodeJS.ProcessEnv = {}) =>
    runPetinv(['list', '--env', 'local', '--retries', '3'], {
      env: freshEnv({ PETINV_BASE_URL: `https://127.0.0.1:${port}/v1`, PETINV_API_KEY: KEY, ...extra }),
    });

  it('a self-signed certificate: named, NODE_EXTRA_CA_CERTS suggested, not retried (exit 7)', async () => {
    const cert = makeCertificate(['127.0.0.1']);
    const { close, port, connections } = await serve(cert);
    const result = await list(port);
    expect(result.code).toBe(7);
    expect(result.stderr).toBe(
      `petinv: cannot trust the TLS certificate of https://127.0.0.1:${port} in local: it presented a self-signed certificate (DEPTH_ZERO_SELF_SIGNED_CERT); certificates are always checked, against Node's authorities and those in NODE_EXTRA_CA_CERTS (a PEM file: point it at a private authority's certificate)\n`,
    );
    expect(connections()).toBe(1);
    // The advice works: trusting the certificate is enough.
    expect((await list(port, { NODE_EXTRA_CA_CERTS: cert.certFile })).code).toBe(0);
    await close();
  });

  it('a certificate for another host, and an expired one', async () => {
    const other = makeCertificate(['inventory.test']);
    const wrongHost = await serve(other);
    const result = await list(wrongHost.port, { NODE_EXTRA_CA_CERTS: other.certFile });
    expect(result.code).toBe(7);
    expect(result.stderr).toContain(
      'it presented a certificate for another host name (ERR_TLS_CERT_ALTNAME_INVALID); certificates are always checked',
    );
    expect(wrongHost.connections()).toBe(1);
    await wrongHost.close();

    const expiredCert = makeCertificate(['127.0.0.1'], { expired: true });
    const expired = await serve(expiredCert);
    const late = await list(expired.port, { NODE_EXTRA_CA_CERTS: expiredCert.certFile });
    expect(late.code).toBe(7);
    expect(late.stderr).toContain('it presented an expired certificate (CERT_HAS_EXPIRED)');
    expect(late.stderr).toContain('NODE_EXTRA_CA_CERTS');
    expect(expired.connections()).toBe(1);
    await expired.close();
  });
});

describe('proxies', () => {
  let proxy: LoggingProxy;
  let service: FakeServer;
  let port: number;
  const seen: string[] = [];
  beforeAll(async () => {
    proxy = await startLoggingProxy();
    service = await startFakeServer(recordingHandler(seen));
    port = service.port;
  });
  afterAll(async () => {
    await proxy.close();
    await service.close();
  });
  // In-process: proxies come from the env main is given. Only NODE_EXTRA_CA_CERTS, which Node reads at
  // its start, needs a process of its own.
  const run = (args: string[], env: NodeJS.ProcessEnv) =>
    (env.NODE_EXTRA_CA_CERTS === undefined ? runMain : runPetinv)(
      ['list', '--env', 'local', '--retries', '0', ...args],
      { env: freshEnv({ PETINV_API_KEY: KEY, ...env }) },
    );

  it('never sends a loopback request through a proxy, whatever NO_PROXY says', async () => {
    proxy.reset();
    for (const noProxy of [undefined, 'other.example', '']) {
      const result = await run([], {
        PETINV_BASE_URL: `http://127.0.0.1:${port}/v1`,
        HTTP_PROXY: proxy.url,
        HTTPS_PROXY: proxy.url,
        http_proxy: proxy.url,
        NO_PROXY: noProxy,
      });
      expect(result.code).toBe(0);
    }
    const local = await run([], { PETINV_BASE_URL: `http://localhost:${port}/v1`, HTTP_PROXY: proxy.url });
    // localhost may resolve to ::1 first, where nothing listens; either way the proxy saw nothing.
    expect([0, 7]).toContain(local.code);
    expect(proxy.seen).toEqual([]);
  });

  it('refuses an http service through a proxy without --insecure, naming the proxy; with it, goes through', async () => {
    proxy.reset();
    const base = `http://inventory.test:${port}/v1`;
    const refused = await run([], { PETINV_BASE_URL: base, HTTP_PROXY: proxy.url });
    expect(refused.code).toBe(3);
    expect(refused.stderr).toBe(
      `petinv: refusing to send the API key for local in clear text to ${base} through the proxy ${proxy.url} (from HTTP_PROXY); use an https URL, or pass --insecure\n`,
    );
    expect(proxy.seen).toEqual([]);
    const insecure = await run(['--insecure'], { PETINV_BASE_URL: base, HTTP_PROXY: proxy.url });
    expect(insecure.code).toBe(0);
    expect(proxy.seen).toEqual([`CONNECT inventory.test:${port}`]);
    // What --insecure allowed: the proxy could read the key.
    expect(proxy.sawBearer()).toBe(true);
  });

  it('still honours NO_PROXY for other hosts', async () => {
    proxy.reset();
    const result = await run(['--insecure'], {
      PETINV_BASE_URL: `http://inventory.test:${port}/v1`,
      HTTP_PROXY: proxy.url,
      NO_PROXY: '.test',
    });
    // Straight to inventory.test, a name only the proxy knows.
    expect(result.code).toBe(7);
    expect(result.stderr).toContain(`cannot reach http://inventory.test:${port}/v1/inventory in local (E`);
    expect(proxy.seen).toEqual([]);
  });

  it.skipIf(!hasOpenssl)(
    'tunnels an https service through an http proxy, the key unreadable to it',
    async () => {
      const cert = makeCertificate(['inventory.test']);
      const tlsSeen: string[] = [];
      const secure = await startFakeServer(recordingHandler(tlsSeen), { tls: cert });
      const securePort = secure.port;
      proxy.reset();
      const result = await run([], {
        PETINV_BASE_URL: `https://inventory.test:${securePort}/v1`,
        HTTPS_PROXY: proxy.url,
        NODE_EXTRA_CA_CERTS: cert.certFile,
      });
      expect(result.code).toBe(0);
      expect(proxy.seen).toEqual([`CONNECT inventory.test:${securePort}`]);
      expect(tlsSeen).toEqual([`GET /v1/inventory Bearer ${KEY}`]);
      expect(proxy.sawBearer()).toBe(false);
      await secure.close();
    },
  );

  it('names a proxy that cannot be reached as the proxy', async () => {
    const closed = await closedPort();
    const result = await run([], {
      PETINV_BASE_URL: 'https://inventory.test/v1',
      HTTPS_PROXY: `http://127.0.0.1:${closed}`,
    });
    expect(result.code).toBe(7);
    expect(result.stderr).toBe(
      `petinv: cannot reach the proxy http://127.0.0.1:${closed} (from HTTPS_PROXY) in local (ECONNREFUSED); is the proxy up, and the proxy variable right?\n`,
    );
  });

  it('refuses a malformed proxy variable as a configuration error, password hidden', async () => {
    const result = await run([], {
      PETINV_BASE_URL: 'https://inventory.test/v1',
      HTTPS_PROXY: 'socks5://ops:hunter2@proxy.example:1080',
    });
    expect(result.code).toBe(3);
    expect(result.stderr).toBe(
      'petinv: HTTPS_PROXY "socks5://***@proxy.example:1080" is not an http or https proxy, the only kinds petinv uses; set it to http://host:port or https://host:port\n',
    );
  });
});
