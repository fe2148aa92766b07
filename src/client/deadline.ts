/**
 * Milliseconds on a monotonic clock. Not `performance.now()`: the `performance` global loads perf_hooks on
 * first use, a millisecond of every cold `petinv list`, which reads no other timing.
 */
const monotonicMs = () => Number(process.hrtime.bigint()) / 1e6;

/**
 * The deadline of one attempt, its body included, that can stop its clock: a streamed body's counts only
 * the waiting for the service, not the time the caller holds a chunk (a slow `less` is no slow service).
 */
export class Deadline {
  private since = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private left: number,
    private readonly onTimeout: () => void,
  ) {
    this.resume();
  }

  resume() {
    if (this.timer !== undefined || this.left <= 0) return;
    this.since = monotonicMs();
    this.timer = setTimeout(() => {
      this.left = 0;
      this.onTimeout();
    }, this.left);
    // As AbortSignal.timeout's own timer: it never keeps the process alive by itself.
    this.timer.unref();
  }

  pause() {
    if (this.timer === undefined) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.left -= monotonicMs() - this.since;
  }

  clear() {
    this.pause();
    this.left = 0;
  }
}
