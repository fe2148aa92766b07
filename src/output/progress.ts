import type { Writable } from 'node:stream';

export interface Progress {
  advance(succeeded: boolean): void;
  finish(): void;
}

const WIDTH = 24;
const REDRAW_MS = 80;

/** A one-line progress bar on stderr, redrawn at most every 80 ms; silent when stderr is not a terminal. */
export function createProgress(
  total: number,
  stream: Writable & { isTTY?: boolean },
  now = () => performance.now(),
): Progress {
  if (!stream.isTTY || total === 0) return { advance() {}, finish() {} };
  let done = 0;
  let failed = 0;
  let drawnAt = Number.NEGATIVE_INFINITY;
  const draw = () => {
    const filled = Math.round((done / total) * WIDTH);
    const failures = failed > 0 ? `, ${failed} failed` : '';
    stream.write(
      `\r[${'#'.repeat(filled)}${'-'.repeat(WIDTH - filled)}] ${done}/${total}${failures}\u001b[K`,
    );
    drawnAt = now();
  };
  return {
    advance(succeeded) {
      done++;
      if (!succeeded) failed++;
      if (now() - drawnAt >= REDRAW_MS) draw();
    },
    finish() {
      draw();
      stream.write('\n');
    },
  };
}
