import { describe, expect, it } from 'vitest';
import { printable } from '../../src/printable';

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
    ['a bidirectional override', 'abc\u202edcba', 'abc�dcba'],
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
