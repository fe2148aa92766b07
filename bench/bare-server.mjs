// The baseline: a bare node:http handler serving the same 10-item body and an in-memory PATCH. Given a
// journal path (`bare-server.mjs <path>`), its PATCH is made durable the way petinv's is: each turn's
// updates written as one numbered, CRC-32-checked line appended with one O_DSYNC write from the thread
// pool, one write at a time, answered once it returns. That is the most the design can give on this
// machine, petinv's own work aside.
import { constants, openSync, write } from 'node:fs';
import { createServer } from 'node:http';
import { crc32 } from 'node:zlib';

const items = Array.from({ length: 10 }, (_, i) => ({
  petId: i + 1,
  quantity: ((i + 1) * 37) % 25,
  status: ['available', 'pending', 'sold'][i % 3],
}));
const byId = new Map(items.map((item) => [String(item.petId), item]));

const journalPath = process.argv[2];
const journal =
  journalPath &&
  openSync(
    journalPath,
    constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_DSYNC,
    0o600,
  );
let waiting = [];
let journalEnd = 0;
let sequence = 0;
let writing = false;
let scheduled = false;

function commitWaiting() {
  scheduled = false;
  if (writing || waiting.length === 0) return;
  const batch = waiting;
  waiting = [];
  writing = true;
  const payload = `[${batch.map(({ line }) => line).join(',')}]`;
  sequence++;
  const checksum = crc32(payload, crc32(`${sequence} `))
    .toString(16)
    .padStart(8, '0');
  const buffer = Buffer.from(`${sequence} ${checksum} ${payload}\n`);
  const start = journalEnd;
  journalEnd += buffer.length;
  write(journal, buffer, 0, buffer.length, start, (error) => {
    if (error) throw error;
    writing = false;
    commitWaiting();
    for (const { apply } of batch) apply();
  });
}

/** Runs `apply` at once in memory, or once `line` is on disk. */
function commit(line, apply) {
  if (!journal) return apply();
  waiting.push({ line, apply });
  if (!writing && !scheduled) {
    scheduled = true;
    setImmediate(commitWaiting);
  }
}

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
      const { quantity } = JSON.parse(text);
      commit(`{"petId":${item.petId},"quantity":${quantity}}`, () => {
        item.quantity = quantity;
        const body = JSON.stringify(item);
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
        res.end(body);
      });
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
