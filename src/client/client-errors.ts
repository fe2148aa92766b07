import { MismatchError, PetinvError } from '../errors';
import { tryOr } from '../files/file-system';
import { headerText } from '../printable';
import { shellWord } from '../suggest';
import { InventoryStreamError } from './inventory-stream';
import { NoAnswerErrors } from './no-answer-errors';
import { TransportError, type TransportResponse } from './transport';

function kindOfStatus(status: number): 'auth' | 'notFound' | 'rejected' | 'server' {
  if (status === 401 || status === 403) return 'auth';
  if (status === 404) return 'notFound';
  if (status >= 400 && status < 500 && status !== 408 && status !== 429) return 'rejected';
  return 'server';
}

/** The errors of answers a client's user reads (what happened, where, what next); NoAnswerErrors has the rest. */
export class ClientErrors extends NoAnswerErrors {
  async failure(
    operation: string,
    status: number,
    text: string,
    subject?: string,
    advice = 'try again later',
  ): Promise<PetinvError> {
    // Loaded only for an answer that is a failure: a successful command's start-up builds no schema.
    const { ApiError } = await import('../contract/schemas');
    // Not JSON, or not an Error body: described below from the status alone.
    const body = ApiError.safeParse(tryOr(() => JSON.parse(text), undefined)).data;
    // The HTTP status decides the kind even when the body's own `status` disagrees.
    const kind = kindOfStatus(status);
    // The service's words reach a terminal, and --json output, only as one bounded printable line.
    const code = body ? this.shown(body.code, 64) : `http_${status}`;
    const message = body && this.shown(body.message);
    const shownText = this.shown(text);
    const detail = body ? `${status} ${code}: ${message}` : `${status}${shownText ? `: ${shownText}` : ''}`;
    const errorBody = { code, message: message ?? `HTTP ${status}`, status };
    const { where, addressed, refusedKeyAdvice } = this.context;
    const words = {
      auth: `the service refused the API key for ${where} (${detail}); ${refusedKeyAdvice ?? `run: petinv login --env ${where}`}`,
      notFound: subject
        ? `${subject} not found in ${where} (${detail})`
        : `${operation} not found in ${where} (${detail}); ${addressed ? 'check the base URL given with --base-url or PETINV_BASE_URL' : `check the base URL: petinv env set-url ${where} <url>`}`,
      rejected: `the service rejected ${operation} in ${where} (${detail})`,
      server: `the service failed ${operation} in ${where} (${detail}); ${advice}`,
    };
    return new PetinvError(kind, words[kind], errorBody);
  }

  /**
   * A redirect is never followed (the Authorization header would go along to wherever it points); the
   * error names where it points and how to move the environment there if the service really moved.
   */
  redirected(operation: string, url: string, path: string, response: TransportResponse): PetinvError {
    const header = response.header('location');
    const location = header === null ? null : headerText(header);
    let suggestion = '<url>';
    let shown = 'no Location';
    let keyNote = '';
    if (location !== null) {
      shown = `Location: ${this.shown(location)}`;
      try {
        const target = new URL(location, url);
        const moved = `${target.origin}${target.pathname.slice(0, -path.length)}`;
        // Suggested only when it is shown as it is (no character printable() would change), quoted for a
        // shell when it needs to be: the address came from the service, and the command will be pasted.
        if (
          target.pathname.endsWith(path) &&
          target.search === '' &&
          /^https?:$/.test(target.protocol) &&
          moved.length <= 500 &&
          this.shown(moved, 500) === moved &&
          // Nor when the Location itself is not shown as it is (a key in it, invisible characters): the
          // URL parser would percent-encode what printable() removes, and the key's pieces with it.
          this.shown(location, 500) === location
        ) {
          suggestion = shellWord(moved);
          // The environment's stored key, if any, goes wherever the environment points.
          if (target.origin !== new URL(url).origin)
            keyNote = this.context.addressed
              ? ` (the API key would then go to ${target.origin}: do so only if you trust it)`
              : ` (its stored API key, if any, would then go to ${target.origin}: do so only if you trust it)`;
        }
      } catch {
        // Not a URL: the user picks the new address.
      }
    }
    return new PetinvError(
      'config',
      `the service in ${this.context.where} answered ${operation} with a redirect (${response.status}, ${shown}); petinv does not follow redirects, so the API key goes nowhere else; if the service moved, ${
        this.context.addressed
          ? `give its address with --base-url or PETINV_BASE_URL instead: ${suggestion}`
          : `run: petinv env set-url ${this.context.where} ${suggestion}`
      }${keyNote}`,
      { code: 'redirect', message: `redirect (${response.status}) not followed`, status: response.status },
    );
  }

  /**
   * A write answered as done with another value than the one sent: not "updated" (issue 21). Both numbers
   * are named, and the service's answer is not taken as the truth either way.
   */
  mismatch(
    operation: string,
    subject: string,
    sent: number,
    answered: number,
    status: number,
    /** The command that reads it back (`petinv get 42 --env staging`). */
    readBack: string,
  ): PetinvError {
    return new MismatchError(
      `mismatch: ${subject} in ${this.context.where} was sent quantity ${sent}, but the service answered ${operation} (${status}) with quantity ${answered}; what it holds now is not known: read it back with ${readBack} before going on`,
      answered,
      status,
    );
  }

  contractError(operation: string, problem: string): PetinvError {
    return new PetinvError(
      'server',
      `the answer from ${this.context.where} to ${operation} does not match the contract: ${this.shown(problem, 300)}`,
      { code: 'invalid_response' },
    );
  }

  /**
   * A failure of a list answer after its first items were handed out: they may be printed already, so it
   * is not retried, and it is a server error (exit 8) whatever broke it, a cut connection included.
   */
  brokenOff(operation: string, url: string, error: unknown, handedOut: number): PetinvError {
    if (error instanceof InventoryStreamError) return this.contractError(operation, error.message);
    if (!(error instanceof TransportError)) return error as PetinvError;
    if (error.reason === 'too large') return this.tooLarge(operation);
    if (error.reason === 'timeout') return this.unreachable(error, url, '');
    return new PetinvError(
      'server',
      `the answer from ${this.context.where} to ${operation} broke off after ${handedOut} ${handedOut === 1 ? 'item' : 'items'} (${this.shown(error.detail)})`,
      { code: 'broken_response' },
    );
  }
}
