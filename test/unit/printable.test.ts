import { describe, expect, it } from 'vitest';
import { printable, printableWithout } from '../../src/printable';

describe('printable: outside text made safe for a terminal', () => {
  it.each([
    ['clear screen and home', 'a\u001b[2J\u001b[Hb', 'ab'],
    ['a colour', '\u001b[31mred\u001b[0m', 'red'],
    ['the window title (OSC ended by BEL)', 'x\u001b]0;pwned\u0007y', 'xy'],
    ['a hyperlink (OSC ended by ST)', '\u001b]8;;http://evil\u001b\\link\u001b]8;;\u001b\\', 'link'],
    ['an 8-bit CSI', 'a\u009b2Jb', 'ab'],
    ['a bell', 'ding\u0007', 'ding�'],
    [
      'a forged petinv line',
      'oops\r\npetinv: all good\rpetinv: really',
      'oops petinv: all good petinv: really',
    ],
    ['NUL, backspace and DEL', 'a\u0000b\bc\u007f', 'a�b�c�'],
    ['a bidirectional override, removed', 'abc\u202edcba', 'abcdcba'],
    [
      'every invisible or direction-changing character, removed',
      'a\u00adb\u061cc\u200bd\u200ce\u200df\u200eg\u200fh\u202ai\u202bj\u202ck\u202dl\u202em\u2060n\u2061o\u2062p\u2063q\u2064r\u2065s\u2066t\u2067u\u2068v\u2069w\ufeffx',
      'abcdefghijklmnopqrstuvwx',
    ],
    ['an isolate that would hide a forged line', 'ok \u2067petinv: done\u2069', 'ok petinv: done'],
    ['tabs and runs of spaces', ' a\t\t b    c ', 'a b c'],
    ['plain text', 'pet 42 not found → try again', 'pet 42 not found → try again'],
  ])('%s', (_name, text, shown) => {
    expect(printable(text)).toBe(shown);
  });

  it('truncates to the length asked for, with an ellipsis, without splitting a surrogate pair', () => {
    expect(printable('x'.repeat(500), 20)).toBe(`${'x'.repeat(19)}…`);
    expect(printable(`${'x'.repeat(18)}😀😀`, 20)).toBe(`${'x'.repeat(18)}…`);
    expect(printable('short', 20)).toBe('short');
  });

  it('cleans only a bounded prefix of a huge text', () => {
    const huge = `${'\u001b[2J'.repeat(10)}start ${'y'.repeat(10_000_000)}`;
    const shown = printable(huge, 50);
    expect(shown).toMatch(/^start y+…$/);
    expect(shown).toHaveLength(50);
  });
});

describe('printableWithout: service text with the API key hidden', () => {
  const KEY = 'pk_secret-0123456789abcdef';

  it('hides the key whole, and rejoined once the escape sequences inside it are removed', () => {
    expect(printableWithout(`bad key ${KEY}!`, [KEY])).toBe('bad key [redacted]!');
    const split = KEY.split('').join('\u001b[m');
    expect(printableWithout(`bad key ${split}!`, [KEY])).toBe('bad key [redacted]!');
  });

  it('hides the key when an escape sequence inside it ends in one of its characters (QA: 11 of 12 shown)', () => {
    // printable() removes `\x9bK` or `\x1b[1K` whole, the key's K with it, so no key is left to find after.
    for (const sequence of ['\u009b', '\u001b[', '\u001b[1', '\u001bP'])
      expect(printableWithout(`bad key pk_secret${sequence}-0123456789abcdef!`, [KEY]), sequence).toBe(
        'bad key [redacted]!',
      );
  });

  it('finds the key split by invisible or direction-changing characters', () => {
    for (const mark of ['\u200b', '\u00ad', '\u202e', '\u2066', '\ufeff', '\u061c', '\u2060']) {
      const split = KEY.split('').join(mark);
      expect(printableWithout(`bad key ${split}!`, [KEY]), mark).toBe('bad key [redacted]!');
    }
  });

  it('finds the key split by the other ignorable characters that show nothing, and removes them', () => {
    const marks = [
      '\u034f',
      '\u115f',
      '\u1160',
      '\u17b4',
      '\u180e',
      '\u3164',
      '\uffa0',
      '\ufff9',
      '\u{e0041}',
    ];
    for (const mark of marks) {
      const split = KEY.split('').join(mark);
      expect(printableWithout(`bad key ${split}!`, [KEY]), mark).toBe('bad key [redacted]!');
      expect(printable(`a${mark}b`), mark).toBe('ab');
    }
  });

  it('finds the key split by line breaks, spaces or control characters', () => {
    for (const mark of ['\n', '\r\n', '\u2028', '\t', ' ', '\u0001', '\u0085']) {
      const split = KEY.split('').join(mark);
      expect(printableWithout(`bad key ${split}!`, [KEY]), JSON.stringify(mark)).toBe('bad key [redacted]!');
    }
    expect(printableWithout('a key-like word: pk_other', [KEY])).toBe('a key-like word: pk_other');
  });

  it('finds the key split by the other spaces (no-break, thin, ideographic), which show as a space does', () => {
    for (const mark of ['\u00a0', '\u2009', '\u200a', '\u202f', '\u205f', '\u3000', '\u1680', ' \u00a0 ']) {
      const split = KEY.split('').join(mark);
      expect(printableWithout(`bad key ${split}!`, [KEY]), JSON.stringify(mark)).toBe('bad key [redacted]!');
    }
  });

  it('never shows the start of a key that the line is cut through', () => {
    const split = KEY.split('').join('\u001b[m');
    for (let pad = 180; pad < 200; pad++) {
      const shown = printableWithout(`${'a'.repeat(pad)}${split}`, [KEY], 200);
      expect(shown.endsWith('…'), shown).toBe(true);
      expect(shown).not.toContain('pk_');
    }
    // Padded with escape sequences, the key reaches past the part of the text that is looked at.
    const shown = printableWithout(`${'\u001b[m'.repeat(240)}${'a'.repeat(100)}${split}`, [KEY], 200);
    expect(shown).toMatch(/^a+\[redacted\]…$/);
  });

  it('is printable itself when there is no key to hide', () => {
    expect(printableWithout('a\u001b[2Jb', [])).toBe('ab');
    expect(printableWithout('x'.repeat(500), [''], 20)).toBe(`${'x'.repeat(19)}…`);
  });
});
