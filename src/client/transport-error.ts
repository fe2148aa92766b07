/**
 * A request that got no usable HTTP answer: `timeout` when it took too long (the body included), `tls`
 * when the certificate could not be trusted (not worth retrying), `too large` when the body passed
 * maxBodyBytes (the detail is the limit), else `network` with the cause.
 */
export class TransportError extends Error {
  constructor(
    readonly reason: 'timeout' | 'network' | 'tls' | 'too large',
    readonly detail: string,
    /** What could not be reached when it was not the service itself: the proxy, as messages name it. */
    readonly unreachable?: string,
    /** A network failure after the answer's status and headers came: the service was reached, its body broke off. */
    readonly brokeOff = false,
    /**
     * The request had been written whole when it failed, and no answer came: the service may have acted on
     * it (a write may have been applied). False when it never left, or when the answer's status came.
     */
    readonly sent = false,
    /** The answer's status, for a body too large to read: a write answered with a success may have been applied. */
    readonly status?: number,
  ) {
    super(detail);
  }
}
