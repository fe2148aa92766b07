import { TransportError } from './transport';

/** undici's failures as TransportErrors: a timeout, a certificate not trusted, a proxy, or the network. */

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
/** Failures to open a connection at all: through a proxy, the connection that failed is the proxy's. */
const CONNECT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
const TLS_PROBLEMS: Record<string, string> = {
  DEPTH_ZERO_SELF_SIGNED_CERT: 'a self-signed certificate',
  SELF_SIGNED_CERT_IN_CHAIN: 'a certificate chain ending in an untrusted self-signed certificate',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'a certificate from an unknown authority',
  UNABLE_TO_GET_ISSUER_CERT: 'a certificate from an unknown authority',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'a certificate from an unknown authority',
  CERT_HAS_EXPIRED: 'an expired certificate',
  CERT_NOT_YET_VALID: 'a certificate that is not valid yet',
  ERR_TLS_CERT_ALTNAME_INVALID: 'a certificate for another host name',
  ERR_SSL_WRONG_VERSION_NUMBER: 'no TLS at all (is it an http:// address?)',
};

/** The certificate problem behind a TLS failure, or undefined when the failure is not about TLS. */
function tlsProblem(code: string): string | undefined {
  const known = TLS_PROBLEMS[code];
  if (known) return `${known} (${code})`;
  if (code.startsWith('CERT_') || code.endsWith('_CERT') || code.startsWith('ERR_SSL_'))
    return `a certificate or TLS handshake it cannot verify (${code})`;
  return undefined;
}

export function transportError(error: unknown, proxy?: string, afterHeaders = false, sent = false) {
  if (error instanceof TransportError) return error;
  const { code, name, message, cause } = error as {
    code?: string;
    name?: string;
    message?: string;
    cause?: { code?: string; message?: string };
  };
  const unanswered = sent && !afterHeaders;
  if (name === 'TimeoutError') return new TransportError('timeout', name, undefined, false, unanswered);
  if (code && TIMEOUT_CODES.has(code))
    return new TransportError('timeout', code, undefined, false, unanswered);
  // undici wraps a failed TLS handshake with an https proxy, and some failures without a code, in `cause`.
  const rootCode = code === 'UND_ERR_PRX_TLS' || code === undefined ? (cause?.code ?? code) : code;
  const tls = rootCode ? tlsProblem(rootCode) : undefined;
  if (tls) return new TransportError('tls', tls, code === 'UND_ERR_PRX_TLS' ? proxy : undefined);
  if (proxy) {
    if (rootCode && CONNECT_CODES.has(rootCode)) return new TransportError('network', rootCode, proxy);
    const refused = /^Proxy response \((\d+)\)/.exec(message ?? '');
    if (refused) return new TransportError('network', `${proxy} answered ${refused[1]} to CONNECT`);
  }
  const detail = cause?.code ?? code ?? cause?.message ?? message ?? String(error);
  return new TransportError('network', detail, undefined, afterHeaders, unanswered);
}
