/**
 * Where a JSON text first goes wrong, as line and column, with a problem that quotes none of the text.
 * The config file holds API keys, and Node's JSON.parse messages quote the text they choke on
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
  const scanner = new JsonScanner(text);
  const problem = scanner.run();
  if (problem === undefined) return undefined;
  const before = text.slice(0, scanner.at);
  const line = before.split('\n').length;
  return { line, column: scanner.at - (before.lastIndexOf('\n') + 1) + 1, problem };
}

/** One pass over the text as a state machine: each step takes the next token `expected` allows. */
class JsonScanner {
  at = 0;
  // The closers of the arrays and objects still open; a stack, not recursion, so deep nesting is safe.
  private readonly open: Array<']' | '}'> = [];
  private expected: Expected = 'value';

  constructor(private readonly text: string) {}

  /** The problem at `at`, or undefined when the whole text is one JSON value. */
  run(): string | undefined {
    for (;;) {
      while (this.at < this.text.length && ' \t\n\r'.includes(this.text.charAt(this.at))) this.at++;
      if (this.at >= this.text.length) {
        return this.expected === 'comma or end' && this.open.length === 0
          ? undefined
          : 'the file ends too early';
      }
      const problem = this.step(this.text.charAt(this.at));
      if (problem !== undefined) return problem;
    }
  }

  private step(char: string): string | undefined {
    switch (this.expected) {
      case 'value or ]':
      case 'value':
        return this.value(char);
      case 'key or }':
      case 'key':
        return this.key(char);
      case 'colon':
        if (char !== ':') return '":" was expected after a property name';
        this.at++;
        this.expected = 'value';
        return undefined;
      case 'comma or end':
        return this.commaOrEnd(char);
    }
  }

  private close() {
    this.open.pop();
    this.at++;
    this.expected = 'comma or end';
  }

  private value(char: string): string | undefined {
    if (this.expected === 'value or ]' && char === ']') {
      this.close();
    } else if (char === '{' || char === '[') {
      this.open.push(char === '{' ? '}' : ']');
      this.at++;
      this.expected = char === '{' ? 'key or }' : 'value or ]';
    } else if (char === '"') {
      const problem = this.scanString();
      if (problem) return problem;
      this.expected = 'comma or end';
    } else {
      NUMBER.lastIndex = this.at;
      LITERAL.lastIndex = this.at;
      const end = NUMBER.test(this.text)
        ? NUMBER.lastIndex
        : LITERAL.test(this.text)
          ? LITERAL.lastIndex
          : -1;
      if (end === -1) return 'an unexpected character where a value should be';
      this.at = end;
      this.expected = 'comma or end';
    }
    return undefined;
  }

  private key(char: string): string | undefined {
    if (this.expected === 'key or }' && char === '}') {
      this.close();
      return undefined;
    }
    if (char !== '"') return 'a property name in double quotes was expected';
    const problem = this.scanString();
    if (problem) return problem;
    this.expected = 'colon';
    return undefined;
  }

  private commaOrEnd(char: string): string | undefined {
    const closer = this.open.at(-1);
    if (closer === undefined) return 'unexpected text after the end of the JSON value';
    if (char === ',') {
      this.at++;
      this.expected = closer === '}' ? 'key' : 'value';
    } else if (char === closer) {
      this.close();
    } else {
      return `"," or "${closer}" was expected`;
    }
    return undefined;
  }

  /** Returns a problem, or undefined once `at` is past the closing quote. */
  private scanString(): string | undefined {
    const { text } = this;
    this.at++;
    while (this.at < text.length) {
      const code = text.charCodeAt(this.at);
      if (code === 0x22) {
        this.at++;
        return undefined;
      }
      if (code < 0x20) return 'a control character inside a string';
      if (code === 0x5c) {
        ESCAPE.lastIndex = this.at + 1;
        if (!ESCAPE.test(text)) {
          this.at++;
          return 'an invalid escape sequence';
        }
        this.at = ESCAPE.lastIndex;
        continue;
      }
      this.at++;
    }
    return 'a string that never ends';
  }
}
