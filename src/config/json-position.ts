const SPACE = /[ \t\n\r]*/y;
const SCALAR = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/y;
// biome-ignore lint/suspicious/noControlCharactersInRegex: a JSON string holds no control character
const STRING_PART = /(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*/y;

type Expected = 'value' | 'value or ]' | 'key' | 'key or }' | 'colon' | 'comma or close' | 'end';

/**
 * Where a JSON text first goes wrong, as line and column, with a problem that quotes none of the text;
 * undefined when it is valid JSON. The config file holds API keys, and Node's JSON.parse messages quote
 * the text they choke on (`Unexpected token 'o', "nope" is not valid JSON`), so a config error cannot.
 */
export function locateJsonSyntaxError(text: string) {
  let at = 0;
  // The closers of the arrays and objects still open; a stack, not recursion, so deep nesting is safe.
  const open: string[] = [];
  let expected = 'value' as Expected;
  const afterValue = () => {
    expected = open.length === 0 ? 'end' : 'comma or close';
  };
  /** Moves `at` past the string that starts there, or to where it goes wrong, and says what. */
  const string = (): string | undefined => {
    STRING_PART.lastIndex = at + 1;
    STRING_PART.test(text);
    at = STRING_PART.lastIndex;
    if (at >= text.length) return 'a string that never ends';
    if (text[at] === '"') {
      at++;
      return undefined;
    }
    if (text[at] === '\\') {
      at++;
      return 'an invalid escape sequence';
    }
    return 'a control character inside a string';
  };
  /** Takes the token at `at` that `expected` allows, moving past it, or says what is wrong there. */
  const step = (char: string): string | undefined => {
    const closer = open.at(-1);
    if (expected === 'end') return 'unexpected text after the end of the JSON value';
    if (char === '"' && expected !== 'colon' && expected !== 'comma or close') {
      const key = expected.startsWith('key');
      const problem = string();
      if (key) expected = 'colon';
      else afterValue();
      return problem;
    }
    if (expected === 'colon') {
      if (char !== ':') return '":" was expected after a property name';
      expected = 'value';
    } else if (expected === 'comma or close') {
      if (char !== ',' && char !== closer) return `"," or "${closer}" was expected`;
      if (char === ',') expected = closer === '}' ? 'key' : 'value';
      else {
        open.pop();
        afterValue();
      }
    } else if ((char === ']' && expected === 'value or ]') || (char === '}' && expected === 'key or }')) {
      open.pop();
      afterValue();
    } else if (expected.startsWith('key')) return 'a property name in double quotes was expected';
    else if (char === '{' || char === '[') {
      open.push(char === '{' ? '}' : ']');
      expected = char === '{' ? 'key or }' : 'value or ]';
    } else {
      SCALAR.lastIndex = at;
      if (!SCALAR.test(text)) return 'an unexpected character where a value should be';
      at = SCALAR.lastIndex - 1;
      afterValue();
    }
    at++;
    return undefined;
  };
  for (;;) {
    SPACE.lastIndex = at;
    SPACE.test(text);
    at = SPACE.lastIndex;
    if (at >= text.length && expected === 'end') return undefined;
    const problem = at >= text.length ? 'the file ends too early' : step(text.charAt(at));
    if (problem === undefined) continue;
    const before = text.slice(0, at);
    return { line: before.split('\n').length, column: at - before.lastIndexOf('\n'), problem };
  }
}
