import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/contract/schemas';
import type { RequestLogEntry } from '../../src/server/app';
import { DEFAULT_MAX_CONNECTIONS_PER_CLIENT } from '../../src/server/defaults';
import { clientOf } from '../../src/server/http-server';
import {
  MAX_STARTED_WRITES_PER_CONNECTION,
  MAX_WAITING_PER_CONNECTION,
} from '../../src/server/request-order';
import { type RunningServer, type ServeOptions, startInventoryServer } from '../../src/server/start';
import { bearer, jsonBody, request } from '../helpers/http';
import { readCommits } from '../helpers/journal';
import {
  exchange,
  openSocket,
  type ParsedResponse,
  parseResponse,
  parseResponses,
  readUntilClosed,
} from '../helpers/raw-http';
import { temporaryDirectory } from '../helpers/serve';

const KEY = 'edge-key';
let server: RunningServer;
const entries: RequestLogEntry[] = [];

beforeAll(async () => {
  server = await startInventoryServer({
    port: 0,
    apiKeys: [KEY],
    seed: 5,
    headersTimeout: 200,
    requestTimeout: 400,
    log: (entry) => entries.push(entry),
  });
});
afterAll(() => server.close());

/** Every error is {code, message, status} as JSON, status equal to the HTTP status. */
function expectError(response: ParsedResponse, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(ApiError.parse(response.json())).toMatchObject({ status, code });
}

const get = (target: string, headers = `Host: x\r\nAuthorization: Bearer ${KEY}\r\n`) =>
  `GET ${target} HTTP/1.1\r\n${headers}Connection: close\r\n\r\n`;
const patch = (target: string, body: string, headers: string) =>
  `PATCH ${target} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n${headers}\r\n${body}`;
/** A server of its own on port 0, for a test that needs other options, and the entries it logs. */
async function startLogged(options: Partial<ServeOptions>) {
  const logged: RequestLogEntry[] = [];
  const started = await startInventoryServer({
    port: 0,
    apiKeys: [KEY],
    ...options,
    log: (entry) => logged.push(entry),
  });
  return { server: started, logged };
}

/** A PATCH of `quantity` that keeps its connection open, for pipelining. */
const keptAlivePatch = (target: string, quantity: number) => {
  const body = `{"quantity":${quantity}}`;
  return `PATCH ${target} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
};

describe('errors below the app are Error bodies too', () => {
  it.each([
    ['a malformed request line', 'GARBAGE\r\n\r\n'],
    ['an unknown HTTP version', 'GET /v1/inventory HTTP/7.1\r\nHost: x\r\n\r\n'],
    ['a header name with a space', 'GET /v1/inventory HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n'],
    ['a control character in a header value', 'GET /v1/inventory HTTP/1.1\r\nHost: x\r\nX: a\x01b\r\n\r\n'],
    [
      'Content-Length with Transfer-Encoding',
      'PATCH /v1/inventory/1 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    ],
    [
      'a bad chunk size',
      'PATCH /v1/inventory/1 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
    ],
  ])('400 malformed_request for %s, and the connection closes', async (_name, bytes) => {
    const response = parseResponse(await exchange(server.port, bytes));
    expectError(response, 400, 'malformed_request');
    expect(response.headers.connection).toBe('close');
  });

  it('400 malformed_request for an HTTP/1.1 request without Host, and the connection closes', async () => {
    // Kept alive, with a PATCH behind it that must not run: its client would never learn that it did.
    const keptAlive = `GET /v1/inventory HTTP/1.1\r\nAuthorization: Bearer ${KEY}\r\n\r\n`;
    const behind = patch('/v1/inventory/5', '{"quantity":61}', 'Content-Type: application/json\r\n');
    const answers = parseResponses(await exchange(server.port, keptAlive + behind));
    expect(answers).toHaveLength(1);
    const list = parseResponse(await exchange(server.port, get('/v1/inventory'))).json() as {
      petId: number;
      quantity: number;
    }[];
    expect(list.find((item) => item.petId === 5)?.quantity).not.toBe(61);
    expectError(answers[0] as ParsedResponse, 400, 'malformed_request');
    expect(answers[0]?.json().message).toContain('Host');
    expect(answers[0]?.headers.connection).toBe('close');
  });

  it.each([
    ['HTTP/2.0', `GET /v1/inventory HTTP/2.0\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\n\r\n`, '2.0'],
    ['no version (HTTP/0.9)', 'GET /v1/inventory\r\n\r\n', '0.9'],
  ])(
    '400 malformed_request for a request line of %s, not an answer as if it were HTTP/1.1',
    async (_name, bytes, version) => {
      const response = parseResponse(await exchange(server.port, bytes));
      expectError(response, 400, 'malformed_request');
      expect(response.json().message).toBe(`serve speaks HTTP/1.0 and HTTP/1.1, not ${version}`);
      expect(response.headers.connection).toBe('close');
    },
  );

  it('431 headers_too_large for headers past the limit', async () => {
    const response = parseResponse(
      await exchange(server.port, get('/v1/inventory', `Host: x\r\nX: ${'a'.repeat(20_000)}\r\n`)),
    );
    expectError(response, 431, 'headers_too_large');
  });

  it('417 expectation_failed for an Expect other than 100-continue, with a log line', async () => {
    const response = parseResponse(
      await exchange(
        server.port,
        get('/v1/inventory', `Host: x\r\nAuthorization: Bearer ${KEY}\r\nExpect: gzip\r\n`),
      ),
    );
    expectError(response, 417, 'expectation_failed');
    expect(entries).toContainEqual({ method: 'GET', path: '/v1/inventory', status: 417, ms: 0 });
  });

  it('still honours Expect: 100-continue', async () => {
    const responses = parseResponses(
      await exchange(
        server.port,
        patch(
          '/v1/inventory/2',
          '{"quantity":4}',
          'Content-Type: application/json\r\nExpect: 100-continue\r\n',
        ),
      ),
    );
    expect(responses.map((response) => response.status)).toEqual([200]);
  });

  describe('Expect: 100-continue', () => {
    /** Sends the head of a PATCH that expects 100-continue, and the first answer that comes back. */
    async function askToContinue(headers: string, length: number) {
      const socket = await openSocket(server.port);
      const first = new Promise<string>((resolve) => socket.once('data', (chunk) => resolve(String(chunk))));
      const closed = readUntilClosed(socket);
      socket.write(
        `PATCH /v1/inventory/2 HTTP/1.1\r\nHost: x\r\n${headers}Content-Type: application/json\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\n\r\n`,
      );
      return { socket, first: await first, closed };
    }

    it.each([
      ['no key', '', 401, 'unauthorized'],
      ['a wrong key', 'Authorization: Bearer not-the-key\r\n', 401, 'unauthorized'],
    ])(
      'is answered 401, not 100, for %s, and the connection closes',
      async (_name, headers, status, code) => {
        const { first, closed } = await askToContinue(headers, 14);
        expect(first).not.toContain('100 Continue');
        const response = parseResponse(first);
        expectError(response, status, code);
        expect(response.headers.connection).toBe('close');
        // The body never sent, the server closes the connection on its own.
        const received = await closed;
        expect(received).not.toContain('100 Continue');
        expect(parseResponses(received).map((answer) => answer.status)).toEqual([status]);
      },
    );

    it('is answered 413, not 100, for a declared size past the limit', async () => {
      const { first, closed } = await askToContinue(`Authorization: Bearer ${KEY}\r\n`, 10_000_000_000);
      expect(first).not.toContain('100 Continue');
      expectError(parseResponse(first), 413, 'payload_too_large');
      expect(await closed).not.toContain('100 Continue');
    });

    // Past 2^64-1, node:http's parser refuses the number itself, before the app could check it: still
    // a body too large to take, with or without a key.
    it.each([
      ['with a key', `Authorization: Bearer ${KEY}\r\n`],
      ['without a key', ''],
    ])('is answered 413, not 100 nor 400, for a declared size past 2^64-1 (%s)', async (_name, headers) => {
      const socket = await openSocket(server.port);
      const closed = readUntilClosed(socket);
      socket.write(
        `PATCH /v1/inventory/2 HTTP/1.1\r\nHost: x\r\n${headers}Content-Type: application/json\r\nContent-Length: 99999999999999999999\r\nExpect: 100-continue\r\n\r\n`,
      );
      const received = await closed;
      expect(received).not.toContain('100 Continue');
      const [answer, ...more] = parseResponses(received);
      expect(more).toEqual([]);
      expectError(answer as ParsedResponse, 413, 'payload_too_large');
      expect(answer?.headers.connection).toBe('close');
    });

    it('is answered 415, not 100, for a body of another media type', async () => {
      const socket = await openSocket(server.port);
      const closed = readUntilClosed(socket);
      socket.write(
        `PATCH /v1/inventory/2 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: text/plain\r\nContent-Length: 14\r\nExpect: 100-continue\r\n\r\n`,
      );
      const received = await closed;
      expect(received).not.toContain('100 Continue');
      expect(parseResponses(received).map((answer) => answer.status)).toEqual([415]);
    });

    it('still closes the connection after its answer when the server began to stop before the 100', async () => {
      const { server: stopping } = await startLogged({ latency: { min: 300, max: 300 } });
      const socket = await openSocket(stopping.port);
      const received = readUntilClosed(socket);
      socket.write(
        `PATCH /v1/inventory/2 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: application/json\r\nContent-Length: 14\r\nExpect: 100-continue\r\n\r\n`,
      );
      await new Promise((resolve) => stopping.server.once('checkContinue', resolve));
      const stopped = stopping.close();
      socket.once('data', () => socket.write('{"quantity":8}'));
      const text = await received;
      await stopped;
      expect(text.startsWith('HTTP/1.1 100 Continue\r\n\r\n')).toBe(true);
      const [answer] = parseResponses(text);
      expect(answer?.status).toBe(200);
      expect(answer?.headers.connection).toBe('close');
    });

    it('is answered 100 once the key and size pass, then the body is read and the connection kept', async () => {
      const { socket, first } = await askToContinue(`Authorization: Bearer ${KEY}\r\n`, 14);
      expect(first).toBe('HTTP/1.1 100 Continue\r\n\r\n');
      const answer = new Promise<string>((resolve) => socket.once('data', (chunk) => resolve(String(chunk))));
      socket.write('{"quantity":9}');
      const response = parseResponse(await answer);
      expect(response.status).toBe(200);
      expect(response.json()).toMatchObject({ petId: 2, quantity: 9 });
      expect(response.headers.connection).toBe('keep-alive');
      socket.destroy();
    });
  });

  it('405 method_not_allowed for CONNECT, rather than a silent close', async () => {
    const response = parseResponse(
      await exchange(server.port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'),
    );
    expectError(response, 405, 'method_not_allowed');
  });

  it('answers a whole request whole before the garbage pipelined after it', async () => {
    const before = entries.length;
    const responses = parseResponses(
      await exchange(
        server.port,
        `GET /v1/inventory HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\n\r\nGARBAGE\r\n\r\n`,
      ),
    );
    // The 400 follows when the 200 was out before the garbage was read; either way the 200 is whole.
    expect(responses[0]?.status).toBe(200);
    expect(responses[0]?.json()).toHaveLength(5);
    for (const later of responses.slice(1)) expectError(later, 400, 'malformed_request');
    expect(entries.slice(before).filter((entry) => 'fault' in entry)).toEqual([]);
  });

  it('never cuts a large answer short for the garbage pipelined after its request', async () => {
    const large = await startInventoryServer({ port: 0, apiKeys: [KEY], seed: 300_000 });
    const socket = await openSocket(large.port);
    socket.pause();
    socket.write(
      `GET /v1/inventory HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\n\r\nGARBAGE\r\n\r\n`,
    );
    await new Promise((resolve) => large.server.once('request', resolve));
    const received = readUntilClosed(socket);
    socket.resume();
    const responses = parseResponses(await received);
    expect(responses.map((response) => response.status)).toEqual([200]);
    expect(responses[0]?.json()).toHaveLength(300_000);
    await large.close();
  });

  it('logs each answered parse error once', async () => {
    const before = entries.length;
    await exchange(server.port, 'GARBAGE\r\n\r\nMORE GARBAGE\r\n\r\n');
    expect(entries.slice(before)).toEqual([
      { event: 'client_error', code: 'HPE_INVALID_METHOD', status: 400 },
    ]);
  });
});

describe('timeouts', () => {
  it('408 request_timeout when the headers do not arrive in time', async () => {
    const socket = await openSocket(server.port);
    const received = readUntilClosed(socket);
    socket.write('GET /v1/inventory HTTP/1.1\r\nHost: x\r\n');
    expectError(parseResponse(await received), 408, 'request_timeout');
  });

  it('408 request_timeout when the body does not arrive in time, through the request own response', async () => {
    const socket = await openSocket(server.port);
    const received = readUntilClosed(socket);
    socket.write(
      `PATCH /v1/inventory/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n{"quan`,
    );
    const response = parseResponse(await received);
    expectError(response, 408, 'request_timeout');
    expect(response.json().message).toContain('400 ms');
    expect(entries).toContainEqual({ event: 'client_error', code: 'ERR_HTTP_REQUEST_TIMEOUT', status: 408 });
  });

  it('answers a request once: an early answer is not followed by a 408 when the rest of its body never comes', async () => {
    const socket = await openSocket(server.port);
    const received = readUntilClosed(socket);
    // No key: 401 at once, before the body; the body then stalls past the request timeout.
    socket.write(
      'PATCH /v1/inventory/1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n{"quan',
    );
    const responses = parseResponses(await received);
    expect(responses.map((response) => response.status)).toEqual([401]);
  });

  it('keeps an idle kept-alive connection open for a next request', async () => {
    const socket = await openSocket(server.port);
    const first = new Promise<string>((resolve) => socket.once('data', (chunk) => resolve(String(chunk))));
    socket.write(`GET /v1/inventory HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\n\r\n`);
    expect(parseResponse(await first).status).toBe(200);
    // Longer than the headers and request timeouts, shorter than the keep-alive timeout (5 s).
    await new Promise((resolve) => setTimeout(resolve, 700));
    const received = readUntilClosed(socket);
    socket.write(get('/v1/inventory'));
    expect(parseResponse(await received).status).toBe(200);
  });
});

describe('request targets', () => {
  it('serves an absolute-form target like the origin form', async () => {
    const origin = parseResponse(await exchange(server.port, get('/v1/inventory')));
    const absolute = parseResponse(
      await exchange(server.port, get(`http://127.0.0.1:${server.port}/v1/inventory?x=1`)),
    );
    expect(absolute.status).toBe(200);
    expect(absolute.body).toBe(origin.body);
    const updated = parseResponse(
      await exchange(
        server.port,
        patch(`HTTP://localhost/v1/inventory/3`, '{"quantity":33}', 'Content-Type: application/json\r\n'),
      ),
    );
    expect(updated.json()).toMatchObject({ petId: 3, quantity: 33 });
  });

  it('answers 404 for an absolute-form target outside the routes', async () => {
    expectError(
      parseResponse(await exchange(server.port, get('http://127.0.0.1/v2/inventory'))),
      404,
      'not_found',
    );
  });

  it('decodes percent-encoded digits in a petId', async () => {
    const response = await request(`${server.baseUrl}/inventory/%34`, jsonBody(KEY, '{"quantity":44}'));
    expect(response.status).toBe(200);
    expect(response.json()).toMatchObject({ petId: 4, quantity: 44 });
    const negative = await request(`${server.baseUrl}/inventory/%2D4`, jsonBody(KEY, '{"quantity":44}'));
    expect(negative.json()).toMatchObject({ status: 404, code: 'pet_not_found' });
  });

  it.each(['%zz', '%', '%3', '%E0%A4%A'])(
    '400 invalid_pet_id for the broken escape %s, not a 500',
    async (petId) => {
      const response = await request(`${server.baseUrl}/inventory/${petId}`, jsonBody(KEY, '{"quantity":1}'));
      expect(response.status).toBe(400);
      expect(response.json()).toMatchObject({ status: 400, code: 'invalid_pet_id' });
    },
  );
});

describe('request bodies serve would misread: 415', () => {
  const send = (headers: Record<string, string>, body: string | Buffer = '{"quantity":5}') =>
    request(`${server.baseUrl}/inventory/1`, {
      method: 'PATCH',
      headers: { ...bearer(KEY), 'Content-Type': 'application/json', ...headers },
      body,
    });

  it.each(['gzip', 'br', 'deflate', 'x-custom'])(
    'Content-Encoding %s, with Accept-Encoding: identity',
    async (coding) => {
      const response = await send({ 'Content-Encoding': coding }, gzipSync('{"quantity":5}'));
      expect(response.status).toBe(415);
      expect(response.json()).toMatchObject({ status: 415, code: 'unsupported_media_type' });
      expect(response.headers['accept-encoding']).toBe('identity');
    },
  );

  it.each([
    'application/json; charset=iso-8859-1',
    'application/json; charset="utf-16"',
    'application/json;charset=latin1',
  ])('%s', async (type) => {
    const response = await send({ 'Content-Type': type });
    expect(response.status).toBe(415);
    expect(response.json()).toMatchObject({ status: 415, code: 'unsupported_media_type' });
  });

  it.each(['gzip, chunked', 'deflate, chunked', 'x-custom, chunked'])(
    'Transfer-Encoding %s: a transfer coding serve does not decode, never read as plain text',
    async (coding) => {
      const body = '{"quantity":5}';
      const chunked = `${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`;
      const raw = `PATCH /v1/inventory/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: application/json\r\nTransfer-Encoding: ${coding}\r\nConnection: close\r\n\r\n${chunked}`;
      expectError(parseResponse(await exchange(server.port, raw)), 415, 'unsupported_media_type');
    },
  );

  it('accepts Transfer-Encoding: chunked alone', async () => {
    const body = '{"quantity":6}';
    const raw = `PATCH /v1/inventory/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
    expect(parseResponse(await exchange(server.port, raw)).status).toBe(200);
  });

  it.each<Record<string, string>>([
    { 'Content-Encoding': 'identity' },
    { 'Content-Type': 'application/json; charset="UTF-8"' },
    { 'Content-Type': 'application/json;charset=utf-8' },
  ])('accepts %o', async (headers) => {
    expect((await send(headers)).status).toBe(200);
  });
});

describe('a client that goes away mid-body', () => {
  it('is logged as an aborted request, not as a fault or a 500', async () => {
    const before = entries.length;
    const socket = await openSocket(server.port);
    socket.write(
      `PATCH /v1/inventory/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{"quantity"`,
    );
    // Once the server has the headers, the request is in the app, reading its body.
    await new Promise((resolve) => server.server.once('request', resolve));
    socket.destroy();
    await expect.poll(() => entries.slice(before).length).toBeGreaterThan(0);
    const logged = entries.slice(before);
    expect(logged).toEqual([
      { method: 'PATCH', path: '/v1/inventory/1', aborted: true, ms: expect.any(Number) },
    ]);
  });
});

describe('a client that pipelines without reading its answers', () => {
  it('has its connection closed once too many requests wait their turn, and nobody else waits for them', async () => {
    const { server: durable, logged } = await startLogged({
      seed: 5,
      dataFile: join(temporaryDirectory(), 'inventory.json'),
    });
    // Every one a durable write (the quantity alternates), so they wait their turn on the connection.
    const flood = Array.from({ length: MAX_WAITING_PER_CONNECTION * 3 }, (_, i) =>
      keptAlivePatch('/v1/inventory/1', 1 + (i % 2)),
    );
    const socket = await openSocket(durable.port);
    socket.on('error', () => {}); // the reset that ends the flood
    socket.write(flood.join(''));
    const answered = parseResponses(await readUntilClosed(socket));
    // Those started (the writes pipelined into one commit) and those waiting their turn, no more.
    expect(answered.length).toBeLessThanOrEqual(
      MAX_STARTED_WRITES_PER_CONNECTION + MAX_WAITING_PER_CONNECTION,
    );
    expect(answered.every((response) => response.status === 200)).toBe(true);
    expect(logged).toContainEqual({ event: 'pipeline_overflow', limit: MAX_WAITING_PER_CONNECTION });
    // The requests that waited were dropped with the connection: a new client is answered at once.
    expect(parseResponse(await exchange(durable.port, get('/v1/inventory'))).status).toBe(200);
    await durable.close();
  });

  it('is served in order when it pipelines fewer, more than a thousand, and reads the answers', async () => {
    const count = 1500;
    // The last one closes the connection, so that the exchange ends.
    const pipelined = Array.from({ length: count }, (_, i) =>
      i === count - 1
        ? patch('/v1/inventory/2', `{"quantity":${i}}`, 'Content-Type: application/json\r\n')
        : keptAlivePatch('/v1/inventory/2', i),
    );
    const answered = parseResponses(await exchange(server.port, pipelined.join('')));
    expect(answered.map((response) => (response.json() as { quantity: number }).quantity)).toEqual(
      Array.from({ length: count }, (_, i) => i),
    );
  });
});

describe('pipelined writes on one connection', () => {
  it('join the same commits, and are answered and applied in the order sent; a read behind them sees them', async () => {
    const dataFile = join(temporaryDirectory(), 'inventory.json');
    const { server: durable } = await startLogged({ seed: 5, dataFile });
    const count = 32;
    // Pets 1 to 4 in turn, each quantity one more than the last: the order the store applies them shows.
    const writes = Array.from({ length: count }, (_, i) =>
      keptAlivePatch(`/v1/inventory/${(i % 4) + 1}`, 100 + i),
    );
    const read = get('/v1/inventory');
    const answered = parseResponses(await exchange(durable.port, writes.join('') + read));
    expect(answered.map((response) => response.status)).toEqual([...Array(count).fill(200), 200]);
    expect(
      answered.slice(0, count).map((response) => (response.json() as { quantity: number }).quantity),
    ).toEqual(Array.from({ length: count }, (_, i) => 100 + i));
    // The read pipelined behind the writes waited for their answers: it shows the last of each pet's.
    expect(
      ((answered[count]?.json() ?? []) as { quantity: number }[]).slice(0, 4).map((item) => item.quantity),
    ).toEqual([128, 129, 130, 131]);
    // One commit per write would be 32: started as soon as the one before was queued, they share commits.
    const commits = readCommits(dataFile);
    expect(commits.flat()).toHaveLength(count);
    expect(commits.length).toBeLessThan(count / 2);
    expect(commits.flat().map(([, quantity]) => quantity)).toEqual(
      Array.from({ length: count }, (_, i) => 100 + i),
    );
    await durable.close();
  });
});

describe('pipelined writes before bytes that end the connection', () => {
  // Whatever each connection's writes were answered, the inventory must show: a write that ran is answered.
  async function sendAndRead(port: number, text: string) {
    const answered = parseResponses(await exchange(port, text));
    const shown = parseResponse(await exchange(port, get('/v1/inventory'))).json() as { quantity: number }[];
    return { answered, quantity: shown[0]?.quantity };
  }

  it('answers every whole write before garbage, then closes', async () => {
    const dataFile = join(temporaryDirectory(), 'inventory.json');
    const { server: durable } = await startLogged({ seed: 5, dataFile });
    const writes = [101, 102, 103].map((quantity) => keptAlivePatch('/v1/inventory/1', quantity));
    const { answered, quantity } = await sendAndRead(durable.port, `${writes.join('')}GARBAGE\r\n\r\n`);
    expect(answered.map((response) => response.status)).toEqual([200, 200, 200]);
    expect(answered.map((response) => response.headers.connection)).toEqual([
      'keep-alive',
      'keep-alive',
      'close',
    ]);
    expect(quantity).toBe(103);
    await durable.close();
  });

  it('answers the write that says Connection: close, and starts nothing sent after it', async () => {
    const dataFile = join(temporaryDirectory(), 'inventory.json');
    const { server: durable } = await startLogged({ seed: 5, dataFile });
    const closing = keptAlivePatch('/v1/inventory/1', 202).replace(
      '\r\n\r\n',
      '\r\nConnection: close\r\n\r\n',
    );
    const text = keptAlivePatch('/v1/inventory/1', 201) + closing + keptAlivePatch('/v1/inventory/1', 203);
    const { answered, quantity } = await sendAndRead(durable.port, text);
    expect(answered.map((response) => response.status)).toEqual([200, 200]);
    expect(answered[1]?.headers.connection).toBe('close');
    expect(quantity).toBe(202);
    await durable.close();
  });

  it('answers the writes before a pipelined body that cannot be parsed, and that body with 400', async () => {
    const dataFile = join(temporaryDirectory(), 'inventory.json');
    const { server: durable } = await startLogged({ seed: 5, dataFile });
    const broken = `PATCH /v1/inventory/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n{"quantity":303}\r\n0\r\n\r\n`;
    const text = keptAlivePatch('/v1/inventory/1', 301) + keptAlivePatch('/v1/inventory/1', 302) + broken;
    const { answered, quantity } = await sendAndRead(durable.port, text);
    expect(answered.map((response) => response.status)).toEqual([200, 200, 400]);
    expect(answered[2]?.headers.connection).toBe('close');
    expect(quantity).toBe(302);
    await durable.close();
  });
});

describe('--max-connections', () => {
  it('closes connections past the cap at once, and serves those open on', async () => {
    const { server: capped, logged: refusals } = await startLogged({ maxConnections: 2 });
    const keepAlive = `GET /v1/inventory HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\n\r\n`;
    const ask = (socket: import('node:net').Socket) =>
      new Promise<string>((resolve) => {
        socket.once('data', (chunk) => resolve(String(chunk)));
        socket.write(keepAlive);
      });
    const open = [await openSocket(capped.port), await openSocket(capped.port)];
    for (const socket of open) expect(parseResponse(await ask(socket)).status).toBe(200);

    const third = await openSocket(capped.port);
    // Closed without a byte: the kernel accepted it, node:http dropped it.
    expect(await readUntilClosed(third)).toBe('');
    expect(refusals).toContainEqual({ event: 'connections_refused', count: 1, limit: 2 });

    for (const socket of open) expect(parseResponse(await ask(socket)).status).toBe(200);
    // Once one closes, a new connection is served again.
    const closed = readUntilClosed(open[0] as import('node:net').Socket);
    open[0]?.end();
    await closed;
    await expect
      .poll(async () => parseResponse(await exchange(capped.port, get('/v1/inventory'))).status)
      .toBe(200);
    open[1]?.destroy();
    await capped.close();
  });
});

describe('--max-connections-per-client', () => {
  /** Opens a connection from `localAddress`; resolves once it is connected (the server may close it at once). */
  const connectFrom = (port: number, localAddress: string) =>
    new Promise<Socket>((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port, localAddress }, () => resolve(socket));
      socket.once('error', reject);
    });

  it('keeps one client holding 1,100 connections, some sending headers slowly, from locking out another', async () => {
    const { server: crowded, logged } = await startLogged({ headersTimeout: 10_000, requestTimeout: 30_000 });
    const held: Socket[] = [];
    try {
      for (let i = 0; i < 1100; i++) {
        const socket = await connectFrom(crowded.port, '127.0.0.2');
        socket.on('error', () => {});
        // Every other one is a slowloris: a request begun, its headers never finished.
        if (i % 2 === 0) socket.write('GET /v1/inventory HTTP/1.1\r\nHost: x\r\nX-Slow: ');
        held.push(socket);
      }
      await expect
        .poll(() => held.filter((socket) => !socket.destroyed && socket.readyState === 'open').length)
        .toBe(DEFAULT_MAX_CONNECTIONS_PER_CLIENT);
      const listed = await request(`${crowded.baseUrl}/inventory`, { headers: bearer(KEY) });
      expect(listed.status).toBe(200);
      expect(logged).toContainEqual({
        event: 'client_connections_refused',
        client: '127.0.0.2',
        count: expect.any(Number),
        limit: DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
      });
    } finally {
      for (const socket of held) socket.destroy();
      await crowded.close();
    }
  });

  it('counts each client on its own, and serves a client again once it closes some', async () => {
    const { server: capped } = await startLogged({ maxConnectionsPerClient: 2 });
    const ask = async (localAddress: string) =>
      parseResponse(
        await new Promise<string>((resolve, reject) => {
          const socket = connect({ host: '127.0.0.1', port: capped.port, localAddress });
          const received = readUntilClosed(socket);
          socket.once('error', reject);
          socket.write(get('/v1/inventory'));
          void received.then(resolve);
        }),
      );
    const first = await connectFrom(capped.port, '127.0.0.3');
    const second = await connectFrom(capped.port, '127.0.0.3');
    const third = await connectFrom(capped.port, '127.0.0.3');
    expect(await readUntilClosed(third)).toBe('');
    expect((await ask('127.0.0.4')).status).toBe(200);
    const closed = readUntilClosed(first);
    first.destroy();
    await closed;
    await expect.poll(async () => (await ask('127.0.0.3')).status).toBe(200);
    second.destroy();
    await capped.close();
  });

  it.each([
    ['127.0.0.2', '127.0.0.2'],
    ['::ffff:10.1.2.3', '10.1.2.3'],
    ['::1', '0:0:0:0::/64'],
    ['2001:db8:1:2:aaaa::1', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::ffff', '2001:db8:1:2::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
  ])('counts %s as %s', (address, client) => {
    expect(clientOf(address)).toBe(client);
  });
});

describe('stopping', () => {
  it('answers the request in flight with Connection: close and starts none after it on that connection', async () => {
    const log: RequestLogEntry[] = [];
    const stopping = await startInventoryServer({
      port: 0,
      apiKeys: [KEY],
      latency: { min: 300, max: 300 },
      log: (entry) => log.push(entry),
    });
    const socket = await openSocket(stopping.port);
    const received = readUntilClosed(socket);
    const keepAlive = `GET /v1/inventory HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\n\r\n`;
    socket.write(keepAlive);
    await new Promise((resolve) => stopping.server.once('request', resolve));
    const closed = stopping.close();
    // A next request on the same kept-alive connection, sent once the stop has begun.
    socket.write(keepAlive);
    const responses = parseResponses(await received);
    expect(responses.map((response) => response.status)).toEqual([200]);
    expect(responses[0]?.headers.connection).toBe('close');
    await closed;
    expect(log.filter((entry) => 'status' in entry)).toHaveLength(1);
  });

  it('ends a kept-alive connection whose answer was already under way once that answer is out', async () => {
    // A list too large for the socket buffers, so its answer is still being written when the stop begins.
    const stopping = await startInventoryServer({ port: 0, apiKeys: [KEY], seed: 300_000 });
    const socket = await openSocket(stopping.port);
    socket.pause();
    socket.write(`GET /v1/inventory HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\n\r\n`);
    await new Promise((resolve) => stopping.server.once('request', resolve));
    // A grace far beyond the test timeout: only the end of that answer may close the connection.
    const closed = stopping.close(60_000);
    const received = readUntilClosed(socket);
    socket.resume();
    const response = parseResponse(await received);
    expect(response.status).toBe(200);
    expect(response.headers.connection).toBe('keep-alive');
    expect(response.json()).toHaveLength(300_000);
    await closed;
  });
});
