import { strFromU8, unzipSync } from 'fflate';

/**
 * The cells of a workbook's first sheet whose value is not to be read: a formula saved without its value
 * (openpyxl and other scripts write them so; Excel and LibreOffice save the value) or with values the
 * workbook calls stale, and an error value (`#DIV/0!`, `#N/A`), which read-excel-file reads as empty. Read
 * so, a counted cell would be "not counted" and an expected cell no check. Each is given the text a CSV of
 * the sheet holds (the formula, the error), so its row is refused for it as a CSV's is. Rows and columns
 * count from 0, as read-excel-file's.
 */
export type UnreadCells = Map<number, Map<number, string>>;

/** Past this many bytes unpacked, a workbook is refused unread: a 1 MB zip of one letter unpacks to a GB. */
const MAX_UNPACKED_BYTES = 256 * 2 ** 20;

/** An element named `name` in any namespace prefix: its attributes, and its content unless it is empty. */
const element = (name: string) =>
  new RegExp(`<(?:[\\w.-]+:)?${name}\\b([^>]*?)(?:/>|>([\\s\\S]*?)</(?:[\\w.-]+:)?${name}>)`, 'g');
/** Attribute `name`, in either quotes, in an element's attributes, or on `xml`'s first `tag` having it. */
const attribute = (xml: string, name: string, tag = '') =>
  new RegExp(`${tag && `<(?:[\\w.-]+:)?${tag}\\b[^>]*?`}\\s${name}\\s*=\\s*(["'])(.*?)\\1`).exec(xml)?.[2];
const XML_ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };
const xmlText = (text: string) =>
  text.replace(/&(?:#x([0-9a-f]+)|#(\d+)|(lt|gt|amp|quot|apos));/gi, (_, hex, decimal, name) =>
    name ? (XML_ENTITIES[name] ?? '') : String.fromCodePoint(Number.parseInt(hex ?? decimal, hex ? 16 : 10)),
  );

/** The first sheet's part, as the workbook lists its sheets and its relationships place them. */
function firstSheetPath(files: Record<string, Uint8Array>, sheets: RegExpExecArray[]): string | undefined {
  const id = attribute(sheets[0]?.[1] ?? '', '[\\w.-]+:id');
  const relationships = strFromU8(files['xl/_rels/workbook.xml.rels'] ?? new Uint8Array());
  for (const [, attributes = ''] of id === undefined ? [] : relationships.matchAll(element('Relationship'))) {
    const target = attribute(attributes, 'Target');
    if (attribute(attributes, 'Id') === id && target !== undefined)
      return target.startsWith('/') ? target.slice(1) : `xl/${target}`;
  }
  return undefined;
}

/** Each style's number format code, by its index (a cell's `s`); built-in percents and exponents by id. */
function cellFormats(styles: Uint8Array | undefined): (string | undefined)[] {
  const xml = styles ? strFromU8(styles) : '';
  const codes = new Map(Object.entries({ 9: '0%', 10: '0.00%', 11: '0.00E+00', 48: '##0.0E+0' }));
  for (const [, attributes = ''] of xml.matchAll(element('numFmt')))
    codes.set(attribute(attributes, 'numFmtId') ?? '', xmlText(attribute(attributes, 'formatCode') ?? ''));
  const [cellXfs] = xml.matchAll(element('cellXfs'));
  return [...(cellXfs?.[2] ?? '').matchAll(element('xf'))].map(([, attributes = '']) =>
    codes.get(attribute(attributes, 'numFmtId') ?? '0'),
  );
}

/**
 * How a number format shows `value` when not as the number (General, `0`, `#,##0`, currencies, colours, an
 * accounting dash for zero): '' for nothing (`;;;`; a zero in `#`, `?`, `0;-0;;@`: a section with no `0` and
 * no text), else its code: a percent, exponent, scale (`#,##0,`), condition (`[<10]`), date or time (`ggge`),
 * text, digits in its text, or a negative section without a minus (`0;0` shows -5 as 5).
 */
function shownOtherwise(code: string, value: number): string | undefined {
  const sections = code.split(/;(?=(?:[^"]*"[^"]*")*[^"]*$)/);
  const section = (value > 0 ? sections[0] : value < 0 ? sections[1] : sections[2]) ?? sections[0] ?? '';
  const bare = section.replace(/"[^"]*"|\\.|\[(?:[a-z]{3,}\d*|\$[^\]]*)\]|[_*]./gi, '');
  const text = section.replace(/"([^"]*)"|\\(.)|\[\$([^\]-]*)[^\]]*\]|\[[^\]]*\]|[_*]./g, '$1$2$3').trim();
  if ((value === 0 ? /^[#?,\s]*$/ : /^$/).test(text) && !/[0a-z[]/i.test(bare)) return '';
  if (value < 0 && sections.length > 1 && !/[-(\u2212]/.test(text)) return code;
  // A zero its section shows without a digit but with text (`"$"#` shows "$"), a dash aside, is no count.
  if (value === 0 && !/[0@]|general/i.test(bare) && !/^[-\u2013]$/.test(text)) return code;
  if (/general/i.test(bare) || (/^[^%]*[0#?@][^%]*$/.test(bare) && !/[a-z[]|[0#?],+(?![0#?,])/i.test(bare)))
    return /\[[<>=]/.test(code) || /"[^"]*\d|\\\d/.test(section) ? code : undefined;
  return value === 0 && /^[-\u2013]$/.test(text) ? undefined : code;
}

/** A cell's column from its letters, counting from 0 (`A` 0, `AA` 26). */
const columnOf = (letters: string) =>
  [...letters].reduce((index, letter) => index * 26 + letter.charCodeAt(0) - 64, 0) - 1;

/** Cells merged across rows (`D2:D3`): one value shown for several rows, stored in the first only. */
export type MergedRange = { ref: string; top: number; bottom: number; left: number; right: number };

/**
 * The workbook's sheets by name, whether the first is hidden, and of the first: the cells not to be read,
 * its merged ranges across rows, and its hidden rows (hidden by hand or by a filter).
 */
export function inspectWorkbook(bytes: Uint8Array): {
  sheets: string[];
  firstHidden: boolean;
  /** Whether the first sheet is a chart sheet (Excel's Move Chart, XlsxWriter's add_chartsheet): no rows. */
  chart: boolean;
  /** The sheet the workbook was saved showing (its active tab), counting from 0. */
  shown: number;
  /** Whether its dates count days from 1904 (old Mac Excel), not 1900. */
  date1904: boolean;
  unread: UnreadCells;
  /** Number cells whose format shows them otherwise (shownOtherwise): '' when it shows nothing, else its code. */
  formatted: UnreadCells;
  merged: MergedRange[];
  hiddenRows: Set<number>;
} {
  let unpacked = 0;
  const files = unzipSync(bytes, {
    filter: ({ name, originalSize }) => {
      unpacked += originalSize;
      if (unpacked > MAX_UNPACKED_BYTES)
        throw new Error(`it unpacks to more than ${MAX_UNPACKED_BYTES >> 20} MiB`);
      return /^xl\/.*\.(xml|rels)$/.test(name);
    },
  });
  const workbook = files['xl/workbook.xml'] ? strFromU8(files['xl/workbook.xml']) : '';
  const listed = [...workbook.matchAll(element('sheet'))];
  // A program that cannot calculate (XlsxWriter) saves 0 as every formula's value and asks for this.
  const stale = /^(1|true)$/.test(attribute(workbook, 'fullCalcOnLoad', 'calcPr') ?? '');
  const sheets = listed.map(([, attributes = '']) => xmlText(attribute(attributes, 'name') ?? ''));
  const firstHidden = /hidden/i.test(attribute(listed[0]?.[1] ?? '', 'state') ?? '');
  const shown = Number(attribute(workbook, 'activeTab', 'workbookView') ?? 0);
  const date1904 = /^(1|true)$/.test(attribute(workbook, 'date1904', 'workbookPr') ?? '');
  const path = firstSheetPath(files, listed);
  const chart = /\/chartsheets\//.test(path ?? '');
  const unread: UnreadCells = new Map();
  const formatted: UnreadCells = new Map();
  const merged: MergedRange[] = [];
  const hiddenRows = new Set<number>();
  const xml = strFromU8((path && files[path]) || new Uint8Array());
  const formats = cellFormats(files['xl/styles.xml']);
  // A sheet set to show no zeros (Excel's option, showZeros="0") shows a 0 as nothing, whatever its format.
  const zerosHidden = /^(0|false)$/.test(attribute(xml, 'showZeros', 'sheetView') ?? '');
  for (const [, attributes = ''] of xml.matchAll(/<(?:[\w.-]+:)?row\b([^>]*)>/g))
    if (/^(1|true)$/.test(attribute(attributes, 'hidden') ?? ''))
      hiddenRows.add(Number(attribute(attributes, 'r')) - 1);
  for (const [, attributes = ''] of xml.matchAll(element('mergeCell'))) {
    const ref = attribute(attributes, 'ref') ?? '';
    const [, first = '', top = '', last = '', bottom = ''] = /^([A-Z]+)(\d+):([A-Z]+)(\d+)$/.exec(ref) ?? [];
    if (+bottom > +top)
      merged.push({ ref, top: +top - 1, bottom: +bottom - 1, left: columnOf(first), right: columnOf(last) });
  }
  for (const [, attributes = '', content = ''] of xml.matchAll(element('c'))) {
    const reference = /^([A-Z]+)(\d+)$/.exec(attribute(attributes, 'r') ?? '');
    // Allowed, and rare: read-excel-file fails on it, and such a cell could not be placed here either.
    if (!reference) throw new Error('its cells do not say where they are (no r attribute)');
    const [formula] = content.matchAll(element('f'));
    const [value] = content.matchAll(element('v'));
    const saved = xmlText(value?.[2] ?? '');
    const type = attribute(attributes, 't');
    // An empty text result (t="str", as Excel saves ="") is a value; an empty number is none (openpyxl).
    const read =
      type !== 'e' && (formula === undefined || (!stale && (saved !== '' || (value && type === 'str'))));
    const number = read && (type ?? 'n') === 'n' && saved !== '';
    const format = number ? formats[Number(attribute(attributes, 's') ?? 0)] : undefined;
    const shows =
      zerosHidden && number && Number(saved) === 0 ? '' : format && shownOtherwise(format, Number(saved));
    if (read && shows === undefined) continue;
    const [, letters = '', row = ''] = reference;
    const map = read ? formatted : unread;
    const cells = map.get(Number(row) - 1) ?? new Map<number, string>();
    cells.set(columnOf(letters), shows ?? (type === 'e' ? saved : `=${xmlText(formula?.[2] || '…')}`));
    map.set(Number(row) - 1, cells);
  }
  return { sheets, firstHidden, chart, shown, date1904, unread, formatted, merged, hiddenRows };
}
