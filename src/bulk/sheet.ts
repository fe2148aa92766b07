import { usageError } from '../errors';
import { quoted } from './numbers';

/** A sheet's header: which column holds what, found by the names a store uses (COLUMN_NAMES), or refused. */

/** `space`: a header such as `petId quantity`, its rows split on runs of spaces and tabs. */
export type Delimiter = ',' | '\t' | ';' | '|' | 'space';

export type ColumnRole = 'petId' | 'counted' | 'expected' | 'status';

export interface SheetHeader {
  delimiter: Delimiter;
  /** The header's column names, as written (trimmed). */
  names: readonly string[];
  petId: number;
  /** The quantity to set: `counted`, `quantity`, a plan's `to`, or another name for it. */
  counted: number;
  /** The quantity the row was read with (`expected`, a plan's `from`): written only while the pet holds it. */
  expected?: number;
  status?: number;
  /** The columns read by nobody, named once in a notice. */
  ignored: readonly string[];
  /** The columns whose names say they hold counts too (soundsLikeCount): only checked against counted. */
  alsoCounts: readonly number[];
}

const words = (text: string) => text.split(' ');

/** The names each column may go by, as canonicalName leaves them (`N°` is `n`); docs/stock-take.md lists them. */
export const COLUMN_NAMES: Readonly<Record<ColumnRole, readonly string[]>> = {
  petId: words(
    'petid id pet petsid petno petnr petnumber animal animalid n no nr number # tier tierid tiernr mascota',
  ),
  counted: words(
    'counted quantity to count qty stock onhand countedqty countedquantity newquantity quantite ' +
      'quantitecomptee anzahl menge bestand gezahlt ist istbestand cantidad cantidadcontada conteo quantita',
  ),
  expected: words('expected from expectedqty expectedquantity before attendu erwartet soll esperado'),
  status: words('status state statut estado zustand stato'),
};
/** A name's words, accents and case aside: `Quantité attendue` is `quantite attendue`, `secondCount` `second count`, `Qty2` `qty 2`. */
const wordsOf = (name: string) =>
  name
    .replace(/(\p{Ll})(\p{Lu})|(\p{L})(\p{N})/gu, '$1$3 $2$4')
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u);
const isCountWord = (word: string) => COUNT_WORD.test(word);

/**
 * Another count of the same pets (`Counted from shelf`, `Qty 2`, `Physical`), not something else about
 * counts (`Count date`, `Last count`): anything there but the counted number is a bad row (fromCells).
 */
export const soundsLikeCount = (name: string) => {
  const words = wordsOf(name);
  return words.some(isCountWord) && !words.some((word) => NOT_A_COUNT.test(word));
};
/** The quantity expected in other words (`Quantité attendue`, `Systembestand`, `Expected (do not edit)`). */
const soundsLikeExpected = (name: string) => {
  const words = wordsOf(name).filter((word) => word !== '');
  const aside = (word: string) => isCountWord(word) || EXPECTED_ASIDE.test(word);
  return (
    words.some((word) => EXPECTED_WORD.test(word)) &&
    words.every((word) => EXPECTED_WORD.test(word) || aside(word))
  );
};
const COUNT_WORD =
  /^(re|nach|zweit)?(count(ed|s)?|qty|qte|quantit\p{L}*|stock|stocktake|tally|anzahl|menge|bestand|gezahlt(e[nrs]?)?|zahl(ung|menge|bestand)|cantidad|conteo|contad[oa]|recuento|compt(e|ee?s?|age)|inventaire|physical|actual|ist|istmenge|inventur(bestand)?|aantal|voorraad|getelde?|telling|existencias)$/u;
const NOT_A_COUNT =
  /^(date|time|at|on|by|von|am|par|por|fecha|unit|id|no|nr|location|bin|variance|diff|difference|delta|order|min|max|last|price|cost|value|sku|status|state|name|type|notes?|comments?|remarks|sheet|team|ok|needed|pack|case|per|sold|received|reserved|damaged|adjustment)$/;
// German writes the book quantity as one word: `Sollbestand`, `Systembestand`.
const EXPECTED_WORD =
  /^(expected|exp|attendue?s?|erwartet(e[nrs]?)?|soll(bestand|menge|wert)?|(buch|system|lager)bestand|systeme?|sistema|systeem|informatique|book|qoh|soh|boekvoorraad|systeemvoorraad|snapshot|export|vorher|prev|previous|prior|verwachte?|esperad[oa]s?|previst[oa]|attes[oa]|theoretical|theoriques?|teoric[oa])$/;
const EXPECTED_ASIDE =
  /^(from|at|on|hand|do|not|edit|laut|lt|volgens|segun|per|as|of|the|en|in|pcs|stk|pieces|units?|q\d|\d+)$/;
/** A dry run's own column (whether the pet was found): part of a plan, read by nobody, named by no notice. */
export const PLAN_ONLY_COLUMNS = new Set(['found']);
const ROLE_OF = new Map(
  Object.entries(COLUMN_NAMES).flatMap(([role, names]) => names.map((name) => [name, role as ColumnRole])),
);

/** A name as compared: lower case, without accents, spaces or punctuation (`Pet's ID` is `petsid`; `#` is `#`). */
export function canonicalName(name: string): string {
  const letters = name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]/gu, '');
  return letters === '' ? name.trim() : letters;
}

/** The role a column's name gives it, if petinv reads it. */
export const roleOf = (name: string): ColumnRole | undefined =>
  ROLE_OF.get(canonicalName(name)) ?? (soundsLikeExpected(name) ? 'expected' : undefined);

/** Excel's first line `sep=;`, which names the delimiter of the sheet below it. */
export function delimiterLine(line: string): Delimiter | undefined {
  const match = /^sep=([,;\t|])$/i.exec(line);
  return match ? (match[1] as Delimiter) : undefined;
}

/** Counts each candidate outside quotes; the commonest wins, a comma on a tie. None: words split by spaces. */
export function findDelimiter(line: string): Delimiter {
  const counts = { ',': 0, '\t': 0, ';': 0, '|': 0 };
  let quoted = false;
  for (const character of line) {
    if (character === '"') quoted = !quoted;
    else if (!quoted && character in counts) counts[character as keyof typeof counts]++;
  }
  const [best, count] = Object.entries(counts).sort((a, b) => b[1] - a[1])[0] as [Delimiter, number];
  if (count === 0) return 'space';
  return counts[','] === count ? ',' : best;
}

const KNOWN = `petinv reads a pet column (${COLUMN_NAMES.petId.slice(0, 4).join(', ')}, …) and a counted column (${COLUMN_NAMES.counted.slice(0, 5).join(', ')}, …), and expected (or from) and status; petinv help input lists every name`;

/** A header from its cells: refused without a pet or a counted column, or naming one role twice. */
export function readHeader(cells: readonly string[], delimiter: Delimiter): SheetHeader {
  const names = cells.map((cell) => cell.trim());
  const filled = names.filter((name) => name !== '');
  const found = filled.length === 0 ? 'no named columns' : `columns ${filled.map(quoted).join(', ')}`;
  const columns: Partial<Record<ColumnRole, number>> = {};
  const ignored: string[] = [];
  const alsoCounts: number[] = [];
  names.forEach((name, index) => {
    if (name === '') return;
    const role = roleOf(name);
    if (role === undefined) {
      if (soundsLikeCount(name)) alsoCounts.push(index);
      else if (!PLAN_ONLY_COLUMNS.has(canonicalName(name))) ignored.push(name);
      return;
    }
    const before = columns[role];
    if (before !== undefined)
      throw usageError(
        `bulk input: the header has two ${role === 'petId' ? 'pet' : role} columns, ${quoted(names[before] as string)} and ${quoted(name)}; which one is meant? Keep one (a counted column beside the quantity now? name that one expected). Nothing was sent`,
      );
    columns[role] = index;
  });
  const { petId, expected, status } = columns;
  // Counts of their own names only (`Counted stock` beside `Expected stock`): the one such is the count.
  if (columns.counted === undefined && expected !== undefined && alsoCounts.length === 1)
    columns.counted = alsoCounts.pop();
  const { counted } = columns;
  // Two columns of counts and none expected (`Stock`, `Physical`): one is likely the stock at export.
  if (counted !== undefined && expected === undefined && alsoCounts.length > 0)
    throw usageError(
      `bulk input: ${[counted, ...alsoCounts].map((index) => quoted(names[index] as string)).join(' and ')} all read as counts, and no column names the quantity expected: which is the count, and is another the stock at export? Name the count counted and the stock at export expected. Nothing was sent`,
    );
  if (petId === undefined || counted === undefined)
    throw usageError(
      `bulk input: the first line reads as a header${names[0]?.startsWith('{') ? ' (it is not valid JSON)' : ''} with ${found}, but ${petId === undefined ? 'none of them names the pet' : 'none of them holds the counted quantity'}; ${KNOWN}. The header must be the first line (no title row above it). Nothing was sent`,
    );
  return { delimiter, names, petId, counted, expected, status, ignored, alsoCounts };
}

/** A count that nothing checks: a count sheet whose expected column was deleted overwrites a colleague unseen. */
export const uncheckedNotice = (what: 'column' | 'key', counted: string) =>
  `no expected ${what}: each pet is set to its ${counted} whatever it holds now, unchecked (a count sheet's expected column catches a colleague's change since the export)`;

/** The header's notices: the columns nobody reads, and those only checked, named once. */
export function headerNotices({ ignored, alsoCounts, names, counted, expected }: SheetHeader): string[] {
  const list = (columns: readonly string[]) =>
    `${columns.length === 1 ? 'column' : 'columns'} ${columns.map(quoted).join(', ')}`;
  const checked = alsoCounts.map((index) => names[index] as string);
  const countedName = names[counted] as string;
  // A count (not list --csv's quantity, nor a plan's to) with nothing to check it: a count sheet whose
  // expected column was deleted, or a sheet of one's own, overwrites a colleague's change since unseen.
  const unchecked = expected === undefined && !['quantity', 'to'].includes(canonicalName(countedName));
  return [
    unchecked && uncheckedNotice('column', quoted(countedName)),
    ignored.length > 0 &&
      `ignoring ${list(ignored)}: petinv reads the pet, counted (or quantity), expected (or from) and status columns`,
    checked.length > 0 &&
      `checking ${list(checked)} against ${quoted(countedName)}: a row where they hold different counts is skipped`,
  ].filter((notice) => notice !== false);
}
