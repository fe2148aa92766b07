import { describe, expect, it } from 'vitest';
import { type BulkProblem, problemPlace } from '../../src/bulk/entries';
import { BulkInputReader, MAX_LINE_BYTES } from '../../src/bulk/input';
import { PetinvError } from '../../src/errors';
import { parseBulkInput } from '../helpers/bulk-input';

const entries = (text: string) =>
  Array.from(parseBulkInput(text).entries, ({ petId, quantity }) => [petId, quantity]);

describe('parseBulkInput', () => {
  it('reads "petId quantity" split by spaces, commas or tabs, skipping blanks and comments', () => {
    expect(entries('# counts\n1 5\n2,6\n\n3\t7\n4 ,  8\n')).toEqual([
      [1n, 5],
      [2n, 6],
      [3n, 7],
      [4n, 8],
    ]);
  });
  it('reads what petinv list prints piped or as CSV', () => {
    expect(entries('1\tavailable\t5\n2\tsold\t0\n')).toEqual([
      [1n, 5],
      [2n, 0],
    ]);
    expect(entries('petId,status,quantity\n1,available,5\n')).toEqual([[1n, 5]]);
  });
  it('reads NDJSON and a JSON array, ignoring other fields, with int64 petIds exact', () => {
    expect(
      entries('{"petId":9223372036854775807,"quantity":1,"status":"sold"}\n{"petId":2,"quantity":3}\n'),
    ).toEqual([
      [9223372036854775807n, 1],
      [2n, 3],
    ]);
    expect(entries('[{"petId":9007199254740993,"quantity":0,"status":"sold"}]')).toEqual([
      [9007199254740993n, 0],
    ]);
  });
  it('reads a first line of braces that is not JSON as a header, by its names, never by position', () => {
    // `{Counted},{Pet ID}` once switched to NDJSON: its line was skipped and `3,5` read as pet 3 set to 5.
    expect(entries('{Counted},{Pet ID}\n3,5\n4,6\n')).toEqual([
      [5n, 3],
      [6n, 4],
    ]);
  });
  it('reads NDJSON a JSON object a line: a line of fields there is a bad line, not read by position', () => {
    const input = parseBulkInput('{"petId":1,"quantity":3}\n3,5\n{"petId":2,"quantity":4}\n');
    expect(Array.from(input.entries, ({ petId, quantity }) => [petId, quantity])).toEqual([
      [1n, 3],
      [2n, 4],
    ]);
    expect(input.problems.map(({ line, message }) => [line, message.slice(0, 14)])).toEqual([
      [2, 'not valid JSON'],
    ]);
  });
  it('reports each bad line with its number and keeps the good ones', () => {
    const input = parseBulkInput(
      '1 5\nx 5\n2 1.5\n3\n4 5 6\n{"petId":5}\n{bad\n6 9223372036854775808\n7 2\n',
    );
    expect(Array.from(input.entries, (entry) => entry.line)).toEqual([1, 9]);
    expect(input.problems).toEqual([
      { line: 2, message: 'petId "x" is not a whole number' },
      { line: 3, message: 'quantity "1.5" is not a whole number', pet: '2' },
      { line: 4, message: 'expected "petId quantity", got 1 field' },
      { line: 5, message: 'expected "petId quantity", got 3 fields' },
      { line: 6, message: 'quantity: is required' },
      { line: 7, message: expect.stringMatching(/^not valid JSON/) },
      {
        line: 8,
        message: 'quantity "9223372036854775808" is larger than a quantity can be (at most 9007199254740991)',
        pet: '6',
      },
    ]);
  });
  it('lets the later of two entries for one pet win, and says so', () => {
    const input = parseBulkInput('1 5\n2 6\n1 7\n');
    expect(Array.from(input.entries, ({ petId, quantity }) => [petId, quantity])).toEqual([
      [2n, 6],
      [1n, 7],
    ]);
    expect(input.problems).toEqual([{ line: 1, message: 'pet 1 appears again at line 3, which wins' }]);
    // Two long ids alike may be two pets a spreadsheet rounded (LibreOffice saves 1000000000000001 so):
    // neither is sent (QA: the later was).
    const rounded = parseBulkInput('1000000000000000 5\n2 6\n1000000000000000 7\n');
    expect(Array.from(rounded.entries, ({ petId }) => petId)).toEqual([2n]);
    const message =
      'pet 1000000000000000 is on more than one line: if these were two pets, a spreadsheet rounded their ids, so none of them is sent: format the column as text';
    expect(rounded.problems).toEqual([
      { line: 1, message },
      { line: 3, message },
    ]);
  });
  it('numbers JSON array problems by item', () => {
    const input = parseBulkInput('[{"petId":1,"quantity":1},{"petId":"x","quantity":1}]');
    expect(input.unit).toBe('item');
    expect(input.problems).toEqual([{ line: 2, message: 'petId: must be an integer within int64' }]);
  });
});

describe('BulkInputReader: input read as a stream', () => {
  const readInPieces = (bytes: Buffer, size: number, reader = new BulkInputReader()) => {
    for (let start = 0; start < bytes.length; start += size) reader.push(bytes.subarray(start, start + size));
    return reader.end();
  };
  const pairs = (input: { entries: Iterable<{ petId: bigint; quantity: number }> }) =>
    Array.from(input.entries, ({ petId, quantity }) => [petId, quantity]);

  it('gives the same result whatever the chunks, a byte at a time included, UTF-8 split across them', () => {
    const text = Buffer.from('1 5\r\n{"petId":9223372036854775807,"quantity":2}\n\n# é\né 5\n3 7');
    for (const size of [1, 2, 3, 7, 1000]) {
      const input = readInPieces(text, size);
      expect(pairs(input)).toEqual([
        [1n, 5],
        [9223372036854775807n, 2],
        [3n, 7],
      ]);
      expect(input.problems).toEqual([{ line: 5, message: 'petId "é" is not a whole number' }]);
    }
  });

  it('accepts a byte-order mark before lines and before a JSON array, even split across chunks', () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    for (const size of [1, 2, 100]) {
      expect(pairs(readInPieces(Buffer.concat([bom, Buffer.from('1 5\n')]), size))).toEqual([[1n, 5]]);
      const array = readInPieces(Buffer.concat([bom, Buffer.from(' \n[{"petId":2,"quantity":3}]')]), size);
      expect(array.unit).toBe('item');
      expect(pairs(array)).toEqual([[2n, 3]]);
    }
  });

  it('counts blank lines before the first update', () => {
    expect(parseBulkInput('\n\n  \n1 2 3\n').problems).toEqual([
      { line: 4, message: 'expected "petId quantity", got 3 fields' },
    ]);
  });

  it('makes a line longer than 64 KiB a bad line without keeping it, and goes on', () => {
    const input = parseBulkInput(`1 5\n${'9'.repeat(MAX_LINE_BYTES + 1)} 1\n2 6\n`);
    expect(pairs(input)).toEqual([
      [1n, 5],
      [2n, 6],
    ]);
    expect(input.problems).toEqual([
      { line: 2, message: 'longer than 64 KiB; one update needs a few dozen bytes' },
    ]);
  });

  it('refuses binary input, such as /dev/zero, and text whose line never ends, with a usage error', () => {
    const endless = new BulkInputReader();
    expect(() => endless.push(Buffer.alloc(2 * 1024 * 1024, '7'))).toThrow(
      'bulk input: its first line has no end within 1 MiB; is it text, one update a line?',
    );
    const later = new BulkInputReader();
    later.push(Buffer.from('1 5\n'));
    expect(() => later.push(Buffer.alloc(2 * 1024 * 1024, '7'))).toThrow(
      'bulk input: line 2 has no end within 1 MiB; is it text, one update a line?',
    );
    const reader = new BulkInputReader();
    const zeros = Buffer.alloc(64 * 1024);
    let error: unknown;
    try {
      for (let sent = 0; sent < 100; sent++) reader.push(zeros);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(PetinvError);
    expect((error as PetinvError).exitCode).toBe(2);
    expect((error as PetinvError).message).toBe(
      'bulk input is a binary file, not text: save it as CSV (comma, semicolon or tab separated) or as an Excel workbook (.xlsx). Nothing was sent',
    );
  });

  it('names UTF-16 text without its byte-order mark, which it refuses as binary (QA)', () => {
    for (const encoding of ['utf16le', 'utf16be'] as const) {
      const text = Buffer.from('petId,counted\n1,5\n', 'utf16le');
      const bytes = encoding === 'utf16le' ? text : text.swap16();
      const reader = new BulkInputReader();
      reader.push(bytes);
      expect(() => reader.end(), encoding).toThrow(
        'bulk input looks like UTF-16 text without its byte-order mark: save it as CSV',
      );
    }
  });

  it('refuses more lines than its limit, so that input that never ends stops', () => {
    const reader = new BulkInputReader(3);
    expect(() => {
      reader.push(Buffer.from('1 1\n2 2\n3 3\n4 4\n'));
      reader.end();
    }).toThrow('bulk input: more than 3 lines; split it into several runs');
  });

  it('echoes bad input only as a short printable quote', () => {
    const input = parseBulkInput(`2 1\n\u001b]0;pwned\u0007\u001b[2J 5\n1 ${'7'.repeat(100)}x\n`);
    // Shown, not run and not hidden: a cell that looks empty once its escapes are gone would puzzle.
    expect(input.problems[0]?.message).toBe('petId "�]0;pwned��[2J" is not a whole number');
    expect(input.problems[1]?.message).toBe(`quantity "${'7'.repeat(39)}…" is not a whole number`);
    expect(() => parseBulkInput('\u001b]0;pwned\u0007 5\n')).toThrow(
      /^bulk input: the first line reads as a header [^\p{Cc}]*$/u,
    );
    // A first line that is no JSON is a header (refused whole here); a later one is a bad line.
    expect(() => parseBulkInput('{"petId":1,\u001b[2J\n')).toThrow(
      /^bulk input: the first line reads as a header \(it is not valid JSON\) [^\p{Cc}]*$/u,
    );
    const json =
      parseBulkInput('{"petId":2,"quantity":1}\n{"petId":1,\u001b[2J\n').problems[0]?.message ?? '';
    expect(json).toMatch(/^not valid JSON: /);
    expect(json).not.toMatch(/\p{Cc}/u);
  });

  it('names a bad row’s pet shown, its escape sequences not run', () => {
    const input = parseBulkInput('petId,counted,notes\n\u001b]0;PWNED\u0007\u001b[31m1,5,x,y\n');
    const place = problemPlace(input.unit, input.problems[0] as BulkProblem);
    expect(place).toBe('row 2 (pet \ufffd]0;PWNED\ufffd\ufffd[31m1)');
  });

  it('lets the last of many repeated pets win, in one pass', () => {
    const lines = Array.from({ length: 20_000 }, (_, index) => `${index % 100} ${index}\n`).join('');
    const input = parseBulkInput(lines);
    expect(input.entries.length).toBe(100);
    expect(input.entries.at(0)).toEqual({ line: 19_901, petId: 0n, quantity: 19_900 });
    expect(input.problems).toHaveLength(19_900);
  });
});
