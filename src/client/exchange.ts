import { type BodyController, BodyQueue, BodyText } from './answer-body';
import { Deadline } from './deadline';
import type { Pipelining, RawHeaders } from './pipelining';
import { TransportError, type TransportResponse } from './transport';
import type { Dispatcher } from './undici';
import { transportError } from './undici-errors';

/** A header by name, repeated values joined as HTTP allows. */
const headerReader = (headers: RawHeaders) => (name: string) => {
  const value = headers[name.toLowerCase()];
  return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
};

/**
 * One exchange as an undici dispatch handler (http-transport.ts drives it too), its body decoded straight
 * into text (a stream between was most of a bulk run's client CPU); settles once. With `stream`, a 2xx
 * settles at its headers.
 */
export class Exchange implements Dispatcher.DispatchHandler {
  private controller: BodyController | undefined;
  private settled = false;
  private status = 0;
  private headers: RawHeaders = {};
  private readonly body = new BodyText();
  /**
   * One deadline for the whole attempt, the body included: undici's own per-phase timers are too coarse
   * below a second. A request still waiting for a connection fails at once and is dropped when it gets one.
   */
  private readonly deadline: Deadline;
  private queue: BodyQueue | undefined;
  /** The request was written whole (onRequestSent): from then on, a write may have been applied. */
  private sent = false;

  constructor(
    private readonly maxBodyBytes: number,
    timeoutMs: number,
    private readonly resolve: (response: TransportResponse) => void,
    private readonly reject: (error: TransportError) => void,
    private readonly proxy: string | undefined,
    private readonly stream: boolean,
    /** What this exchange teaches the transport's Pipelining, and whether it was pipelined. */
    private readonly pipelining?: { learn: Pipelining; pipelined: boolean },
  ) {
    this.deadline = new Deadline(timeoutMs, () =>
      this.fail(
        new TransportError(
          'timeout',
          'TimeoutError',
          undefined,
          // The status came and the body did not finish in time: the service was reached (issue 21).
          this.status !== 0,
          this.sent && this.status === 0,
        ),
      ),
    );
  }

  private fail(error: TransportError) {
    if (this.queue) {
      // Settled already: the reader of the body learns it.
      this.controller?.abort(error);
      this.queue.fail(error);
      return;
    }
    if (this.settled) return;
    this.settled = true;
    this.deadline.clear();
    this.controller?.abort(error);
    this.reject(error);
  }

  onRequestSent() {
    this.sent = true;
  }

  onRequestStart(controller: BodyController) {
    this.controller = controller;
    if (this.settled) controller.abort(new TransportError('timeout', 'TimeoutError'));
    // A pipelined request whose connection closed before its answer: undici would write it again on
    // another connection, unseen. It was sent and got no answer, so it may have been applied: that is
    // said, and the retry is the client's own, which says so when it succeeds (issue 21).
    else if (this.sent) {
      this.pipelining?.learn.lost();
      // Thrown rather than aborted: undici then drops this request unwritten and fails it (onResponseError),
      // where an abort would also destroy the new connection, and the requests it carries.
      throw new TransportError('network', 'the connection closed before the answer', undefined, false, true);
    }
  }

  onResponseStart(controller: BodyController, statusCode: number, headers: RawHeaders) {
    // 1xx answers are interim: the real one follows.
    if (statusCode < 200 || this.settled) return;
    this.status = statusCode;
    this.headers = headers;
    this.pipelining?.learn.answered(headers);
    const declared = headers['content-length'];
    // Left unread, the body would hold the connection, and petinv's exit, until the deadline.
    if (typeof declared === 'string' && Number(declared) > this.maxBodyBytes) return this.tooLarge();
    if (!this.stream || statusCode >= 300) return;
    this.queue = new BodyQueue(controller, this.deadline, this.maxBodyBytes);
    this.settled = true;
    this.resolve({ status: this.status, header: headerReader(this.headers), text: '', body: this.queue });
  }

  onResponseData(_controller: BodyController, chunk: Buffer) {
    if (this.settled && !this.queue) return;
    // Past the limit the body is cut off: the connection is dropped, the rest never read.
    if (!(this.queue ? this.queue.push(chunk) : this.body.add(chunk, this.maxBodyBytes))) this.tooLarge();
  }

  onResponseEnd() {
    if (this.queue) return this.queue.end();
    if (this.settled) return;
    this.settled = true;
    this.deadline.clear();
    const pipelining = this.pipelining;
    this.resolve({
      status: this.status,
      header: headerReader(this.headers),
      text: this.body.text(),
      ...(pipelining?.pipelined && { outOfStep: () => pipelining.learn.lost() }),
    });
  }

  onResponseError(_controller: BodyController, error: Error) {
    // Pipelined, sent, and no answer came: the connection broke under it.
    if (this.sent && this.status === 0 && this.pipelining?.pipelined) this.pipelining.learn.lost();
    // A status came first: the service answered, and its body broke off.
    this.fail(transportError(error, this.proxy, this.status !== 0, this.sent));
  }

  private tooLarge() {
    this.fail(
      new TransportError('too large', String(this.maxBodyBytes), undefined, false, false, this.status),
    );
  }
}
