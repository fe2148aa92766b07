import { INT64_MAX, parsePetId, parseQuantity, QUANTITY_MAX } from '../contract/rules';
import { printable } from '../printable';

/**
 * A petId or a quantity read from text (an argument, a cell, a line), or why it is not one, naming what a
 * spreadsheet does to numbers (formulas, thousands separators, decimals, exponents).
 */

/** An echoed piece of input, short and printable: an escape sequence's start shows as �, not removed. */
export const shown = (text: string) =>
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the characters that start escape sequences
  printable(text.replace(/[\u001b\u0090\u009b\u009d-\u009f]/g, '\ufffd'), 40);
export const quoted = (text: string) => `"${shown(text)}"`;

/** Why text is no whole number; `limit` is the largest one `what` can be. */
function notWholeNumber(text: string, limit: number | bigint, what: string): string {
  if (text.startsWith('='))
    return 'is a formula, not a number: recalculate the sheet, then paste the column as values (values only)';
  // 13.000 (or 13,000 in German) may be 13 as a CSV saved as shown writes a format of 3 decimals.
  if (/^[+-]?\d{1,3}[.,]\d{3}$/.test(text))
    return `could be ${text.replace(',', '.')} (3 decimals) or ${text.replace(/[.,]/, '')} (a thousands separator): write the whole number meant`;
  if (/^[+-]?\d{1,3}([,. \u00a0\u202f']\d{3})+$/.test(text))
    return `has thousands separators: write ${text.replace(/[^\d-]/g, '')}`;
  if (/^[+-]?\d+[.,]0+$/.test(text)) return `has decimals: write ${text.replace(/[.,]0+$/, '')}`;
  if (/^[+-]?(\d+[.,]?\d*|[.,]\d+)e[+-]?\d+$/i.test(text))
    return 'is written as an exponent: format the column as whole numbers';
  if (/^[+-]?(\d+[.,]\d*|[.,]\d+)$/.test(text)) {
    // 2.9999999999999996, as a spreadsheet stores =0.1*30 and shows 3: its digits are not what was seen.
    const near = Math.round(Number(text.replace(',', '.')));
    return Math.abs(Number(text.replace(',', '.')) - near) < 1e-9
      ? `is not a whole number: a calculation's rounding error for ${near}? round it in the sheet (ROUND), or type ${near}`
      : 'is not a whole number';
  }
  if (/^\+\d+$/.test(text)) return `has a "+": write ${text.slice(1)}`;
  if (/^-?0\d+$/.test(text)) return `has leading zeros: write ${BigInt(text)}`;
  if (/^\d+$/.test(text)) return `is larger than ${what} can be (at most ${limit})`;
  if (/^-\d+$/.test(text)) return `is below what ${what} can be (at least -${limit})`;
  // A zero-width space or a direction mark is invisible in the message, full-width ７ nearly so.
  const hidden = /(?! )[\p{Cf}\p{Zs}]/u.exec(text)?.[0];
  if (hidden)
    return `holds an invisible character (U+${hidden.codePointAt(0)?.toString(16).toUpperCase().padStart(4, '0')}): clear the cell and type the number again`;
  if (/[^\P{Nd}0-9]/u.test(text))
    return 'has digits other than 0-9 (full-width, or of another script): type them as 0-9';
  return 'is not a whole number';
}

/** A petId that reached petinv as a spreadsheet's number: already rounded past 2^53, so no pet of anyone's. */
export const roundedPetId = (text: string) =>
  `petId ${printable(text, 40)}: the spreadsheet rounded it: format the column as text`;

/**
 * Spreadsheets keep 15 significant digits of a number (Excel as it is typed, LibreOffice as it saves), so
 * a longer petId stored as a number may be another pet's, even below 2^53, and a longer quantity another
 * number: refused, as a guess would be.
 */
const SPREADSHEET_DIGITS = 15;

/** Why the number `text` a spreadsheet stored in a `column` cell cannot be trusted; undefined when it can. */
export function spreadsheetNumberProblem(text: string, column: string): string | undefined {
  const value = Math.abs(Number(text.replace(',', '.')));
  if (value > Number.MAX_SAFE_INTEGER && column === 'petId') return roundedPetId(text);
  if (value >= 10 ** SPREADSHEET_DIGITS)
    return `${column} ${printable(text, 40)}: the spreadsheet may have rounded it (it keeps ${SPREADSHEET_DIGITS} digits of a number): format the column as text`;
  return undefined;
}

/** `="007"`, as Excel and Google Sheets write a number to be kept as text: the text, else the cell as it is. */
const textOf = (cell: string) => /^="([^"]*)"$/.exec(cell)?.[1]?.trim() ?? cell;

/** A petId from its text, or the words saying why it is not one. */
export function readPetId(cell: string): bigint | string {
  const text = textOf(cell);
  const petId = parsePetId(text);
  if (petId !== undefined) return petId;
  // `9.00719925474099E+015`: a spreadsheet's long number in a cell not formatted as text; `1e0` is an exponent.
  if (/^\d+([.,]\d*)?e\+?\d+$/i.test(text) && Number(text.replace(',', '.')) >= 10 ** SPREADSHEET_DIGITS)
    return roundedPetId(text);
  return `petId ${quoted(text)} ${notWholeNumber(text, INT64_MAX, 'a petId')}`;
}

/** A quantity from its text, `name` being its column's name as the sheet gives it. */
export function readQuantity(cell: string, name: string): number | string {
  const text = textOf(cell);
  return (
    parseQuantity(text) ??
    `${name.toLowerCase()} ${quoted(text)} ${notWholeNumber(text, QUANTITY_MAX, 'a quantity')}`
  );
}
