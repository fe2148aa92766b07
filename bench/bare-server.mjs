// The baseline: a bare node:http handler serving the same 10-item body and an in-memory PATCH.
import { createServer } from 'node:http';

const items = Array.from({ length: 10 }, (_, i) => ({
  petId: i + 1,
  quantity: ((i + 1) * 37) % 25,
  status: ['available', 'pending', 'sold'][i % 3],
}));
const byId = new Map(items.map((item) => [String(item.petId), item]));

const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/v1/inventory') {
    const body = JSON.stringify(items);
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
    return res.end(body);
  }
  const match = /^\/v1\/inventory\/(\d+)$/.exec(req.url ?? '');
  if (req.method === 'PATCH' && match) {
    let text = '';
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      const item = byId.get(match[1]);
      item.quantity = JSON.parse(text).quantity;
      const body = JSON.stringify(item);
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
    });
    return;
  }
  res.writeHead(404).end();
});
server.listen(0, '127.0.0.1', () =>
  process.stderr.write(
    `${JSON.stringify({ event: 'listening', baseUrl: `http://127.0.0.1:${server.address().port}/v1` })}\n`,
  ),
);
process.on('SIGTERM', () => server.close(() => process.exit(0)));
