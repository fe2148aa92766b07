import type { OutputStream } from './context';

const REDRAW_MS = 80;
/** The bar itself is never narrower than this; below it, only the counts are shown. */
const MIN_BAR = 10;
const DEFAULT_COLUMNS = 80;
const CLEAR_LINE = '\r\u001b[K';

/** 75 seconds as "1:15", an hour and more as "1:02:03". */
function clock(seconds: number): string {
  const whole = Math.ceil(seconds);
  const [hours, minutes, secs] = [Math.floor(whole / 3600), Math.floor(whole / 60) % 60, whole % 60];
  const pad = (value: number) => String(value).padStart(2, '0');
  return hours > 0 ? `${hours}:${pad(minutes)}:${pad(secs)}` : `${minutes}:${pad(secs)}`;
}

/**
 * The line of the bar for `done` of `total` after `elapsedMs`, at most `columns - 1` characters (a line
 * as wide as the terminal would wrap on some): `[####------] 120/1000 · 400/s · 0:03 left, 2 failed`.
 */
export function progressLine(
  done: number,
  total: number,
  failed: number,
  elapsedMs: number,
  columns: number,
): string {
  const rate = elapsedMs > 0 ? (done * 1000) / elapsedMs : 0;
  const pace = done > 0 && rate > 0 ? ` · ${Math.round(rate)}/s · ${clock((total - done) / rate)} left` : '';
  const failures = failed > 0 ? `, ${failed} failed` : '';
  const counts = `${done}/${total}${pace}${failures}`;
  const fits = columns - 1;
  const room = fits - counts.length - 3;
  if (room >= MIN_BAR) {
    const width = Math.min(room, 40);
    const filled = Math.round((done / total) * width);
    return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${counts}`;
  }
  // A narrow terminal: the bar goes first, then the pace.
  if (counts.length <= fits) return counts;
  return `${done}/${total}${failures}`.slice(0, Math.max(fits, 0));
}

/** A one-line progress bar on stderr, redrawn at most every 80 ms; silent when stderr is not a terminal. */
export function createProgress(total: number, stream: OutputStream, now = () => performance.now()) {
  if (!stream.isTTY || total === 0)
    return {
      advance(_succeeded: boolean) {},
      print: (text: string) => void stream.write(text),
      finish() {},
    };
  const started = now();
  let done = 0;
  let failed = 0;
  let drawnAt = Number.NEGATIVE_INFINITY;
  const draw = () => {
    const columns = stream.columns || DEFAULT_COLUMNS;
    stream.write(`${CLEAR_LINE}${progressLine(done, total, failed, now() - started, columns)}`);
    drawnAt = now();
  };
  return {
    advance(succeeded: boolean) {
      done++;
      if (!succeeded) failed++;
      if (now() - drawnAt >= REDRAW_MS) draw();
    },
    /** Writes `text` (whole lines) above the bar, which is drawn again at the next advance. */
    print(text: string) {
      stream.write(`${CLEAR_LINE}${text}`);
      drawnAt = Number.NEGATIVE_INFINITY;
    },
    /** Clears the bar, so that the line that follows (the summary) takes its place. */
    finish() {
      stream.write(CLEAR_LINE);
    },
  };
}
