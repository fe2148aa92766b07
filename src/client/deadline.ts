/**
 * The deadline of one attempt whose body is streamed (the list). It counts only the time spent waiting
 * for the service, not the time the caller holds a chunk (writing it to a pipe that `less` reads slowly,
 * say): a slow reader of petinv's output is not a slow service.
 */

/** A deadline that can stop its clock: `signal` aborts with a TimeoutError once `ms` have run. */
export interface Deadline {
  readonly signal: AbortSignal;
  pause(): void;
  resume(): void;
  clear(): void;
}

/**
 * Milliseconds on a monotonic clock. Not `performance.now()`: the `performance` global loads perf_hooks on
 * first use, a millisecond of every cold `petinv list`, which reads no other timing.
 */
const monotonicMs = () => Number(process.hrtime.bigint()) / 1e6;

export function createDeadline(ms: number, now = monotonicMs): Deadline {
  const controller = new AbortController();
  let left = ms;
  let since = 0;
  let timer: NodeJS.Timeout | undefined;
  const deadline: Deadline = {
    signal: controller.signal,
    resume() {
      if (timer !== undefined || controller.signal.aborted) return;
      since = now();
      timer = setTimeout(
        () => controller.abort(new DOMException(`no answer within ${ms} ms`, 'TimeoutError')),
        Math.max(left, 0),
      );
      // As AbortSignal.timeout's own timer: it never keeps the process alive by itself.
      timer.unref();
    },
    pause() {
      if (timer === undefined) return;
      clearTimeout(timer);
      timer = undefined;
      left -= now() - since;
    },
    clear() {
      deadline.pause();
      left = 0;
    },
  };
  deadline.resume();
  return deadline;
}
