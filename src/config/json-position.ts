/** JSON.parse's message for `text`, or undefined when it is JSON. */
function parseFailure(text: string): string | undefined {
  try {
    JSON.parse(text);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

const ENDS_EARLY = 'Unexpected end of JSON input';
/** V8's messages that name a place (`Expected ':' after property name in JSON at position 5 …`) quote no text. */
const PLACED = /^([^"]+?) (?:in JSON )?at position (\d+)/;

/** Whether JSON.parse finds `prefix` unfinished rather than wrong: JSON, or wanting more at its very end. */
function unfinished(prefix: string): boolean {
  const message = parseFailure(prefix);
  return message === undefined || message === ENDS_EARLY || PLACED.exec(message)?.[2] === `${prefix.length}`;
}

/**
 * Where a JSON text first goes wrong (line, column), in words quoting none of it (it holds API keys, and
 * JSON.parse quotes `"nope" is not valid JSON`); undefined when valid. Those are placed by bisection: the
 * end of the longest start JSON.parse finds unfinished rather than wrong.
 */
export function locateJsonSyntaxError(text: string) {
  const message = parseFailure(text);
  if (message === undefined) return undefined;
  const placed = PLACED.exec(message);
  let at = placed ? Number(placed[2]) : text.length;
  if (!placed && message !== ENDS_EARLY) {
    let low = 0;
    for (let high = text.length; high - low > 1; ) {
      const middle = (low + high) >>> 1;
      if (unfinished(text.slice(0, middle))) low = middle;
      else high = middle;
    }
    at = low;
  }
  const before = text.slice(0, at);
  const words =
    placed?.[1] ?? (message === ENDS_EARLY ? 'the file ends too early' : 'an unexpected character');
  const problem = words.charAt(0).toLowerCase() + words.slice(1);
  return { line: before.split('\n').length, column: at - before.lastIndexOf('\n'), problem };
}
