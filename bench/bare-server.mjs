// The baseline: a bare node:http handler serving the same 10-item body and an in-memory PATCH. Given a
// journal path (`bare-server.mjs <path>`), its PATCH is made durable the way petinv's is: each turn's
// updates written as one numbered, CRC-32-checked line appended with one O_DSYNC write from the thread
// pool, one write at a time, answered once it returns. That is the most the design can give on this
// machine, petinv's own work aside.
//
// Two variants measure designs petinv does not use (`npm run bench -- ceiling`, bench/ceiling.mjs):
// `--journals K` writes to K journals at once (`<path>`, `<path>.2`, ...), each commit on a free one,
// answered in order, each line carrying the number through which every commit is durable; `--over-room`
// writes over room laid down in advance (64 MiB of filler, synced before listening) instead of appending.
import { constants, fsyncSync, openSync, write, writeSync } from 'node:fs';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { crc32 } from 'node:zlib';

const { values: options, positionals } = parseArgs({
  allowPositionals: true,
  options: { journals: { type: 'string', default: '1' }, 'over-room': { type: 'boolean', default: false } },
});

const items = Array.from({ length: 10 }, (_, i) => ({
  petId: i + 1,
  quantity: ((i + 1) * 37) % 25,
  status: ['available', 'pending', 'sold'][i % 3],
}));
const byId = new Map(items.map((item) => [String(item.petId), item]));

const ROOM_CHUNK = Buffer.alloc(1 << 20, 0x7e);
const ROOM_CHUNKS = 64;

const journalPath = positionals[0];
const journals = journalPath
  ? Array.from({ length: Number(options.journals) }, (_, index) => {
      const path = index === 0 ? journalPath : `${journalPath}.${index + 1}`;
      const fd = openSync(
        path,
        constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_DSYNC,
        0o600,
      );
      if (options['over-room']) {
        for (let chunk = 0; chunk < ROOM_CHUNKS; chunk++)
          writeSync(fd, ROOM_CHUNK, 0, ROOM_CHUNK.length, chunk * ROOM_CHUNK.length);
        fsyncSync(fd);
      }
      return { fd, end: 0, writing: false };
    })
  : [];

let waiting = [];
let sequence = 0;
/** The number through which every commit is durable. */
let durableThrough = 0;
/** Commits written or being written, in order, until they and every one before them are durable. */
const unanswered = [];
let scheduled = false;

function commitWaiting() {
  scheduled = false;
  while (waiting.length > 0) {
    const journal = journals.find((candidate) => !candidate.writing);
    if (!journal) return;
    const batch = waiting;
    waiting = [];
    const payload = `[${batch.map(({ line }) => line).join(',')}]`;
    sequence++;
    const head = journals.length > 1 ? `${sequence} ${durableThrough} ` : `${sequence} `;
    const checksum = crc32(payload, crc32(head)).toString(16).padStart(8, '0');
    const buffer = Buffer.from(`${head}${checksum} ${payload}\n`);
    const commit = { sequence, batch, durable: false };
    unanswered.push(commit);
    const start = journal.end;
    journal.end += buffer.length;
    journal.writing = true;
    write(journal.fd, buffer, 0, buffer.length, start, (error) => {
      if (error) throw error;
      journal.writing = false;
      commit.durable = true;
      const answered = [];
      while (unanswered[0]?.durable) {
        const first = unanswered.shift();
        durableThrough = first.sequence;
        answered.push(first);
      }
      commitWaiting();
      for (const { batch } of answered) for (const { apply } of batch) apply();
    });
  }
}

/** Runs `apply` at once in memory, or once `line` is on disk. */
function commit(line, apply) {
  if (journals.length === 0) return apply();
  waiting.push({ line, apply });
  // A journal being written starts the next commit when it is done: wait for a turn only when one is free.
  if (!scheduled && journals.some((journal) => !journal.writing)) {
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
