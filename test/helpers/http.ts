import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The body parsed as JSON; tests index into it freely. */
  // biome-ignore lint/suspicious/noExplicitAny: a test reads whatever the server answered
  json: () => any;
}

/** A plain node:http request, so a test controls every header and byte (fetch adds its own). */
export function request(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: options.method ?? 'GET', headers: options.headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) });
        });
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

export const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });
export const jsonBody = (key: string, body: string) => ({
  method: 'PATCH',
  headers: { ...bearer(key), 'Content-Type': 'application/json' },
  body,
});
