import { createServer, request as httpRequest, type Server } from 'node:http';
import { connect as netConnect } from 'node:net';

export interface LoggingProxy {
  url: string;
  /** One entry per request: `CONNECT host:port`, or `GET http://host:port/path` for a forwarded one. */
  seen: string[];
  /** Whether any byte stream it relayed, in either form, carried an Authorization header in clear. */
  sawBearer: () => boolean;
  /** Forgets what it saw, between tests. */
  reset: () => void;
  close: () => Promise<void>;
}

/**
 * A small forward proxy that records what it saw. Every host it is asked for is served from 127.0.0.1, so
 * tests can use a name that is not loopback (inventory.test) for a server on this machine.
 */
export async function startLoggingProxy(): Promise<LoggingProxy> {
  const seen: string[] = [];
  let relayed = '';
  const proxy: Server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    if (req.headers.authorization) relayed += `authorization: ${req.headers.authorization}\n`;
    const target = new URL(String(req.url));
    const upstream = httpRequest(
      {
        host: '127.0.0.1',
        port: target.port,
        path: target.pathname + target.search,
        method: req.method,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  proxy.on('connect', (req, socket, head) => {
    seen.push(`CONNECT ${req.url}`);
    const port = Number(String(req.url).split(':').at(-1));
    const upstream = netConnect(port, '127.0.0.1', () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      socket.on('data', (chunk: Buffer) => {
        relayed += chunk.toString('latin1');
      });
      upstream.pipe(socket).pipe(upstream);
    });
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(proxy.address() as { port: number }).port}`,
    seen,
    sawBearer: () => /authorization: bearer/i.test(relayed),
    reset: () => {
      seen.length = 0;
      relayed = '';
    },
    close: () => {
      proxy.closeAllConnections();
      return new Promise((resolve) => proxy.close(() => resolve()));
    },
  };
}
