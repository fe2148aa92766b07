/** An answer's headers as undici hands them to a handler. */
export type RawHeaders = Record<string, string | string[] | undefined>;

/**
 * Whether a transport pipelines, learned from the answers: on once one shows a kept connection (RFC 9112
 * 9.3.2); off for good once a pipelined request lost its connection before its answer (a retry each), or
 * an answer is plainly another request's (outOfStep: every later one on its connection would be too).
 */
export class Pipelining {
  /** `answered`: an answer without `Connection: close` came, and whether its connection stayed open is not yet seen. */
  private state: 'unknown' | 'answered' | 'on' | 'off' = 'unknown';

  get on(): boolean {
    return this.state === 'on';
  }

  answered(headers: RawHeaders) {
    if (this.state !== 'unknown') return;
    const connection = headers.connection;
    const closes = (Array.isArray(connection) ? connection.join(',') : (connection ?? ''))
      .toLowerCase()
      .split(',')
      .some((token) => token.trim() === 'close');
    if (!closes) this.state = 'answered';
  }

  /**
   * Before a request is routed: an answer without `close` turns pipelining on once a connection is seen
   * open and idle after it. An HTTP/1.0 answer without keep-alive closes its connection and says nothing
   * of it in its headers (undici sees the version; a handler does not), so the headers alone are not enough.
   */
  decide(keptConnection: () => boolean) {
    if (this.state === 'answered') this.state = keptConnection() ? 'on' : 'unknown';
  }

  lost() {
    this.state = 'off';
  }
}
