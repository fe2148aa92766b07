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
 * Where a JSON text first goes wrong, as line and column, with a problem that quotes none of the text;
 * undefined when it is valid JSON. The config file holds API keys, and some of JSON.parse's messages quote
 * the text they choke on (`Unexpected token 'o', "nope" is not valid JSON`): for those, the place is found
 * by bisection, as the end of the longest start of the text that JSON.parse finds unfinished rather than
 * wrong (every start of an unfinished text is unfinished too).
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
