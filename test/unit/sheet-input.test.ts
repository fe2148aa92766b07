import { describe, expect, it } from 'vitest';
import { BulkInputReader, parseBulkInput, readBulkInput } from '../../src/bulk/input';
import { findDelimiter } from '../../src/bulk/sheet';
import { PetinvError } from '../../src/errors';

const read = (text: string) => {
  const input = parseBulkInput(text);
  return {
    entries: Array.from(input.entries, (entry) => ({ ...entry })),
    problems: input.problems,
    notices: input.notices,
  };
};
const pairs = (text: string) => read(text).entries.map(({ petId, quantity }) => [petId, quantity]);

describe('a sheet: columns chosen by the header', () => {
  it('reads petinv list --csv in any --fields order', () => {
    expect(pairs('quantity,petId\n70,1\n5,2\n')).toEqual([
      [1n, 70],
      [2n, 5],
    ]);
    expect(pairs('status,quantity,petId\navailable,70,1\n')).toEqual([[1n, 70]]);
    expect(pairs('petId,status,quantity\n1,available,5\n')).toEqual([[1n, 5]]);
  });

  it('reads a spreadsheet CSV: BOM, CRLF, quoted names in any case, notes with commas and line breaks, trailing empty rows', () => {
    const sheet =
      '\ufeff"PetId","Quantity","Notes"\r\n"1","5","counted twice, shelf 3"\r\n2,6,"a ""big"" one\r\non two lines"\r\n\r\n,,\r\n,,,\r\n3,7,\r\n';
    const result = read(sheet);
    expect(result.entries.map((entry) => [entry.line, entry.petId, entry.quantity])).toEqual([
      [2, 1n, 5],
      [3, 2n, 6],
      [8, 3n, 7],
    ]);
    expect(result.problems).toEqual([]);
    expect(result.notices).toEqual([expect.stringContaining('"Notes"')]);
  });

  it('reads PET ID, pet_id and pet-id as petId', () => {
    expect(pairs('PET ID\tQUANTITY\n1\t5\n')).toEqual([[1n, 5]]);
    expect(pairs('pet_id,quantity\n2,6\n')).toEqual([[2n, 6]]);
    expect(pairs('Pet-Id;To\n3;7\n')).toEqual([[3n, 7]]);
  });

  it("takes the delimiter from Excel's sep= line above the header", () => {
    expect(pairs('sep=;\r\nPetId;Quantity;Note\r\n1;5;a,b\r\n')).toEqual([[1n, 5]]);
    expect(read('sep=,\npetId,quantity\n2,6\n').entries.map((entry) => entry.line)).toEqual([3]);
  });

  it('reads a sheet whose lines end in a carriage return alone (Excel for Mac\'s "CSV (Macintosh)"), in chunks of any size', async () => {
    const text = 'PetId,Quantity,Notes\r1,5,"two\rlines"\r2,6,\r\r3,7,x\r';
    for (const size of [1, 2, 3, 4096]) {
      const bytes = Buffer.from(text);
      const chunks = Array.from({ length: Math.ceil(bytes.length / size) }, (_, index) =>
        bytes.subarray(index * size, (index + 1) * size),
      );
      const input = await readBulkInput(
        (async function* () {
          yield* chunks;
        })(),
      );
      expect(Array.from(input.entries, (entry) => [entry.line, entry.petId, entry.quantity])).toEqual([
        [2, 1n, 5],
        [4, 2n, 6],
        [6, 3n, 7],
      ]);
      expect(input.problems).toEqual([]);
      expect(input.notices).toEqual([expect.stringContaining('"Notes"')]);
    }
    // CRLF split between chunks is one line end, not two.
    const reader = new BulkInputReader();
    for (const piece of ['petId,quantity\r', '\n1,5\r', '\n2,6\r\n']) reader.push(Buffer.from(piece));
    expect(Array.from(reader.end().entries, (entry) => entry.line)).toEqual([2, 3]);
  });

  it("reads a spreadsheet's UTF-16 text (a BOM says which), in chunks of any size", async () => {
    const text = 'petId\tquantity\tNotiz\r\n1\t5\tGrün, oben\r\n2\t6\t\r\n';
    const little = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    const big = Buffer.from(little);
    big.swap16();
    for (const bytes of [little, big])
      for (const size of [1, 3, 4096]) {
        const chunks = Array.from({ length: Math.ceil(bytes.length / size) }, (_, index) =>
          bytes.subarray(index * size, (index + 1) * size),
        );
        const input = await readBulkInput(
          (async function* () {
            yield* chunks;
          })(),
        );
        expect(Array.from(input.entries, (entry) => [entry.petId, entry.quantity])).toEqual([
          [1n, 5],
          [2n, 6],
        ]);
        expect(input.notices).toEqual([expect.stringContaining('"Notiz"')]);
      }
  });

  it('finds a semicolon or a tab from the header line', () => {
    expect(findDelimiter('petId;quantity;note')).toBe(';');
    expect(findDelimiter('petId\tquantity')).toBe('\t');
    expect(findDelimiter('"a;b",petId,quantity')).toBe(',');
    expect(pairs('Quantity;PetID;Notiz\r\n7;1;"a; b"\r\n8;2;\r\n')).toEqual([
      [1n, 7],
      [2n, 8],
    ]);
    expect(pairs('petId\tstatus\tquantity\n1\tsold\t4\n2\t\t5\n')).toEqual([
      [1n, 4],
      [2n, 5],
    ]);
  });

  it('reads a plan: to and from, and a status to compare', () => {
    const result = read('petId,from,to,found\n1,12,5,true\n2,,6,false\n');
    expect(result.entries).toEqual([
      { line: 2, petId: 1n, quantity: 5, from: 12 },
      { line: 3, petId: 2n, quantity: 6 },
    ]);
    expect(result.notices).toEqual([]);
    expect(read('petId,status,quantity\n1,SOLD,5\n2,lost,3\n').entries).toEqual([
      { line: 2, petId: 1n, quantity: 5, status: 'sold' },
      { line: 3, petId: 2n, quantity: 3, status: 'other' },
    ]);
  });

  it('reports bad rows with their line numbers and keeps the rest', () => {
    const result = read('petId,quantity\n1,5\nx,5\n2,1.5\n3,\n,4\n4,5,6\n5,"7\n6,8\n');
    expect(result.entries.map((entry) => entry.petId)).toEqual([1n]);
    expect(result.problems.map((problem) => problem.line)).toEqual([3, 4, 5, 6, 7, 8]);
    expect(result.problems[2]?.message).toBe('no quantity');
    expect(result.problems[3]?.message).toBe('no petId');
    expect(result.problems[5]?.message).toContain('never closed');
  });

  it('a quote inside an unquoted cell is text, and never swallows the rows below', () => {
    const result = read('petId,quantity,notes\n1,5,12" shelf\n2,6,ok\n3,"7\n4,8\n');
    expect(result.entries.map((entry) => [entry.line, entry.petId, entry.quantity])).toEqual([
      [2, 1n, 5],
      [3, 2n, 6],
    ]);
    // A quote that opens a cell and never closes does take the rest: that is what it says.
    expect(result.problems).toEqual([
      {
        line: 4,
        message:
          'a quote opened in this row is never closed; line 5 below it was read into its cell, not as a row',
      },
    ]);
    expect(read('petId,quantity\n1,"5\n2,6\n3,7\n').problems).toEqual([
      {
        line: 2,
        message:
          'a quote opened in this row is never closed; lines 3 to 4 below it were read into its cell, not as rows',
      },
    ]);
  });

  it('a quoted cell that takes in the rows below and closes on text is a bad row, not a silent note', () => {
    // The note's quote on line 3 is never closed as RFC 4180 closes one: the quote before x on line 5 is
    // followed by text. Read leniently, lines 4 and 5 (pets 3 and 4) became part of pet 2's note, unsaid.
    const result = read('petId,quantity,notes\n1,81,ok\n2,82,"unclosed note\n3,83,fine\n4,84,"x"\n5,85,y\n');
    expect(result.entries.map((entry) => [entry.line, entry.petId, entry.quantity])).toEqual([
      [2, 1n, 81],
      [6, 5n, 85],
    ]);
    expect(result.problems).toEqual([{ line: 3, message: expect.stringContaining('runs on to line 5') }]);
    // A note on several lines, closed as RFC 4180 closes it, is a note; so is a stray quote on one line.
    expect(pairs('petId,quantity,notes\n1,5,"two\nlines"\n2,6,"x" y\n')).toEqual([
      [1n, 5],
      [2n, 6],
    ]);
  });

  it('refuses a header without a petId or a quantity column, naming what it found and needs', () => {
    for (const sheet of [
      'id,qty\n1,5\n',
      'petId,count\n1,5\n',
      'quantity;notes\n5;x\n',
      'petId,to,quantity\n1,2,3\n',
    ]) {
      let error: unknown;
      try {
        parseBulkInput(sheet);
      } catch (caught) {
        error = caught;
      }
      expect(error, sheet).toBeInstanceOf(PetinvError);
      expect((error as PetinvError).kind).toBe('usage');
    }
    expect(() => parseBulkInput('id,qty\n1,5\n')).toThrow(/columns "id", "qty"; it needs a petId column/);
    // One column that petinv would read is a header too: a sheet of quantities without their pets.
    expect(() => parseBulkInput('Quantity\n5\n7\n')).toThrow(/columns "Quantity"; it needs a petId column/);
    // A single word that names no column is a bad row of data, as before.
    expect(parseBulkInput('hello\n1 5\n').problems).toHaveLength(1);
  });

  it('refuses a header below the first line whose columns would be read by position or by another header', () => {
    // A title row above the header: its rows were read as "petId quantity", pet 20 set to 1.
    expect(() => parseBulkInput('Stock take 25 Nov,\nQuantity,PetId\n20,1\n5,2\n')).toThrow(
      /line 2 names its columns \(a header\), but it is not the first line.*Nothing was sent/,
    );
    expect(() => parseBulkInput('1 5\nquantity petId\n70 1\n')).toThrow(/line 2 names its columns/);
    // Two exports one after the other, their columns in other orders.
    expect(() => parseBulkInput('petId,quantity\n1,5\nquantity,petId\n70,2\n')).toThrow(
      /line 3 names its columns/,
    );
    // The same header again is a bad row, as before; the rows below it are read by the same columns.
    const again = parseBulkInput('petId,quantity\n1,5\nPetId,Quantity\n2,6\n');
    expect(Array.from(again.entries, (entry) => [entry.petId, entry.quantity])).toEqual([
      [1n, 5],
      [2n, 6],
    ]);
    expect(again.problems).toHaveLength(1);
    // A cell that only mentions a pet id is no header.
    expect(parseBulkInput('1 5\nCarpet idea,Blue\n').problems).toHaveLength(1);
    expect(pairs('petId,quantity,notes\n1,5,see pet id 4\n2,6,petId\n')).toEqual([
      [1n, 5],
      [2n, 6],
    ]);
  });

  it('keeps headerless lines, NDJSON and JSON arrays, plans among them', () => {
    expect(pairs('1 5\n2,6\n,,\n')).toEqual([
      [1n, 5],
      [2n, 6],
    ]);
    expect(read('{"petId":1,"from":3,"to":4,"found":true}\n').entries).toEqual([
      { line: 1, petId: 1n, quantity: 4, from: 3 },
    ]);
    expect(read('[{"petId":1,"from":null,"to":4,"found":false}]').entries).toEqual([
      { line: 1, petId: 1n, quantity: 4 },
    ]);
    expect(read('{"petId":1,"quantity":2,"to":4}\n').problems).toEqual([
      { line: 1, message: 'has both quantity and to; give one' },
    ]);
  });
});
