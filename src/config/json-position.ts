/**
 * Where a JSON text first goes wrong, as line and column, with a problem that quotes none of the text.
 * The config file holds API keys, and Node 20's JSON.parse messages quote the text they choke on
 * (`Unexpected token 'o', "nope" is not valid JSON`), so a config error cannot pass them on.
 */
export interface JsonSyntaxError {
  line: number;
  column: number;
  problem: string;
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const LITERAL = /true|false|null/y;
const ESCAPE = /["\\/bfnrt]|u[0-9a-fA-F]{4}/y;

type Expected = 'value' | 'value or ]' | 'key' | 'key or }' | 'colon' | 'comma or end';

/** The first syntax error of `text`, or undefined when it is valid JSON. */
export function locateJsonSyntaxError(text: string): JsonSyntaxError | undefined {
  let at = 0;
  // The closers of the arrays and objects still open; a stack, not recursion, so deep nesting is safe.
  const open: Array<']' | '}'> = [];
  let expected: Expected = 'value';

  const located = (problem: string): JsonSyntaxError => {
    const before = text.slice(0, at);
    const line = before.split('\n').length;
    return { line, column: at - (before.lastIndexOf('\n') + 1) + 1, problem };
  };
  // Returns a problem, or undefined once `at` is past the closing quote.
  const scanString = (): string | undefined => {
    at++;
    while (at < text.length) {
      const code = text.charCodeAt(at);
      if (code === 0x22) {
        at++;
        return undefined;
      }
      if (code < 0x20) return 'a control character inside a string';
      if (code === 0x5c) {
        ESCAPE.lastIndex = at + 1;
        if (!ESCAPE.test(text)) {
          at++;
          return 'an invalid escape sequence';
        }
        at = ESCAPE.lastIndex;
        continue;
      }
      at++;
    }
    return 'a string that never ends';
  };

  for (;;) {
    while (at < text.length && ' \t\n\r'.includes(text.charAt(at))) at++;
    if (at >= text.length) {
      return expected === 'comma or end' && open.length === 0
        ? undefined
        : located('the file ends too early');
    }
    const char = text.charAt(at);
    switch (expected) {
      case 'value or ]':
      case 'value': {
        if (expected === 'value or ]' && char === ']') {
          open.pop();
          at++;
          expected = 'comma or end';
        } else if (char === '{') {
          open.push('}');
          at++;
          expected = 'key or }';
        } else if (char === '[') {
          open.push(']');
          at++;
          expected = 'value or ]';
        } else if (char === '"') {
          const problem = scanString();
          if (problem) return located(problem);
          expected = 'comma or end';
        } else {
          NUMBER.lastIndex = at;
          LITERAL.lastIndex = at;
          const end = NUMBER.test(text) ? NUMBER.lastIndex : LITERAL.test(text) ? LITERAL.lastIndex : -1;
          if (end === -1) return located('an unexpected character where a value should be');
          at = end;
          expected = 'comma or end';
        }
        break;
      }
      case 'key or }':
      case 'key': {
        if (expected === 'key or }' && char === '}') {
          open.pop();
          at++;
          expected = 'comma or end';
          break;
        }
        if (char !== '"') return located('a property name in double quotes was expected');
        const problem = scanString();
        if (problem) return located(problem);
        expected = 'colon';
        break;
      }
      case 'colon':
        if (char !== ':') return located('":" was expected after a property name');
        at++;
        expected = 'value';
        break;
      case 'comma or end': {
        const closer = open.at(-1);
        if (closer === undefined) return located('unexpected text after the end of the JSON value');
        if (char === ',') {
          at++;
          expected = closer === '}' ? 'key' : 'value';
        } else if (char === closer) {
          open.pop();
          at++;
        } else {
          return located(`"," or "${closer}" was expected`);
        }
        break;
      }
    }
  }
}
