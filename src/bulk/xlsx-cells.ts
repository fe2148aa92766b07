import { strFromU8, unzipSync } from 'fflate';

/**
 * The cells of a workbook's first sheet whose value is not to be read: a formula saved without its value
 * (as scripts such as openpyxl save them) or with one not calculated, and an error value (`#N/A`), which
 * read-excel-file reads as empty: a counted cell "not counted", an expected one no check. Each is given the
 * text a CSV of the sheet holds (the formula, the error), so its row is refused as a CSV's is. Rows and
 * columns count from 0, as read-excel-file's.
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

/** White text (Excel's "White, Background 1" is theme colour 0), written as the format `[White]` would. */
const white = (xml: string) =>
  /^(ff)?f{6}$/i.test(attribute(xml, 'rgb', 'color') ?? '') || attribute(xml, 'theme', 'color') === '0'
    ? '[White]'
    : undefined;

/** Each style's number format code by index (a cell's `s`; built-ins by id), and each conditional format's. */
function numberFormats(styles: Uint8Array | undefined) {
  const xml = styles ? strFromU8(styles) : '';
  const items = (list: string, item: string) => [
    ...([...xml.matchAll(element(list))][0]?.[2] ?? '').matchAll(element(item)),
  ];
  const codes = new Map(Object.entries({ 9: '0%', 10: '0.00%', 11: '0.00E+00', 48: '##0.0E+0' }));
  for (const [, attributes = ''] of items('numFmts', 'numFmt'))
    codes.set(attribute(attributes, 'numFmtId') ?? '', xmlText(attribute(attributes, 'formatCode') ?? ''));
  const fonts = items('fonts', 'font').map(([, , font = '']) => white(font));
  const filled = items('fills', 'fill').map(([, , fill = '']) => /patternType\s*=\s*["']solid/.test(fill));
  return {
    // A white font on no fill hides a number as `[White]` does: a counted cell looks empty (QA).
    cells: items('cellXfs', 'xf').map(([, attributes = '']) => {
      const code = codes.get(attribute(attributes, 'numFmtId') ?? '0');
      const at = (name: string) => Number(attribute(attributes, name) ?? 0);
      return fonts[at('fontId')] && !filled[at('fillId')] ? `[White]${code ?? 'General'}` : code;
    }),
    // Its own code (its id may be another's); a white font, Excel's advice to hide zeros, as `[White]`.
    conditional: items('dxfs', 'dxf').map(
      ([, , dxf = '']) => attribute(dxf, 'formatCode', 'numFmt') ?? white(dxf),
    ),
  };
}

/**
 * How a format shows `value` when not as the number (General, `#,##0`, currencies, an accounting dash for
 * zero): '' for nothing (`;;;`, a zero in `#` or `0;-0;;@`), else its code: a percent, exponent, scale,
 * condition, date, text, digits in its text, white, or a sign not shown as it is (`0;0`, `0-`).
 */
function shownOtherwise(code: string, value: number): string | undefined {
  const sections = code.split(SECTION_BREAK);
  const section = (value > 0 ? sections[0] : value < 0 ? sections[1] : sections[2]) ?? sections[0] ?? '';
  const bare = section.replace(/"[^"]*"|\\.|\[(?:[a-z]{3,}\d*|\$[^\]]*)\]|[_*]./gi, '');
  const text = section.replace(/"([^"]*)"|\\(.)|\[\$([^\]-]*)[^\]]*\]|\[[^\]]*\]|[_*]./g, '$1$2$3').trim();
  // A zero's dash, a currency beside it (accounting's `_("$"* "-"_)`), shows zero.
  const dash = value === 0 && /^\p{Sc}?[\s?]*[-\u2013\u2014][\s?]*\p{Sc}?$/u.test(text);
  if ((value === 0 ? /^[#?,\s]*$/ : /^$/).test(text) && !/[0a-z[]/i.test(bare)) return '';
  if ((value < 0 && sections.length > 1 && !/[-(\u2212]/.test(text)) || /\[white\]/i.test(section))
    return code;
  if (value > 0 && /[-\u2212]/.test(bare)) return code; // a minus on a positive (`"$"-#,##0`, `0-`)
  // A zero its section shows without a digit but with text (`"$"#` shows "$"), a dash aside, is no count.
  if (value === 0 && !/[0@]|general/i.test(bare) && !dash) return code;
  if (/general/i.test(bare) || (/^[^%]*[0#?@][^%]*$/.test(bare) && !/[a-z[]|[0#?],+(?![0#?,])/i.test(bare)))
    return /\[[<>=]/.test(code) || /\d/.test(section.match(/"[^"]*"|\\./g)?.join('') ?? '')
      ? code
      : undefined;
  return dash ? undefined : code;
}

/**
 * What a formula of numbers, the sheet's cells, + - * / and SUM gives from the saved values (by placeKey);
 * NaN for any other. A saved value it contradicts was never calculated (LibreOffice saves XlsxWriter's 0s).
 */
function calculate(formula: string, saved: Map<number, number | string>, budget: { cells: number }): number {
  const tokens = formula.replace(/\$/g, '').toUpperCase().match(FORMULA_TOKEN) ?? [];
  let at = 0;
  // SUM leaves out a range's text; an empty cell is 0 everywhere.
  const summed = ({ top, left, bottom, right }: CellRange) => {
    budget.cells -= (bottom - top + 1) * (right - left + 1);
    if (budget.cells < 0 || bottom < top || right < left) return Number.NaN;
    let total = 0;
    for (let row = top; row <= bottom; row++)
      for (let column = left; column <= right; column++) {
        const cell = saved.get(placeKey(row, column)) ?? 0;
        total += typeof cell === 'number' ? cell : 0;
      }
    return total;
  };
  const operand = (): number => {
    const token = tokens[at++] ?? '';
    if (token === '-' || token === '+') return (token === '-' ? -1 : 1) * operand();
    const range = rangeOf(token);
    // A range outside SUM, or text in arithmetic (Excel's #VALUE!), is no number here.
    const cell = range && (token.includes(':') ? '' : (saved.get(placeKey(range.top, range.left)) ?? 0));
    if (range) return typeof cell === 'number' ? cell : Number.NaN;
    if (token !== '(' && token !== 'SUM(') return Number(token);
    let value = 0;
    do {
      const inSum = token === 'SUM(' && tokens[at]?.includes(':') && rangeOf(tokens[at++] ?? '');
      value += inSum ? summed(inSum) : sum();
    } while (token === 'SUM(' && tokens[at] === ',' && ++at);
    return tokens[at++] === ')' ? value : Number.NaN;
  };
  const product = (): number => {
    let value = operand();
    while (tokens[at] === '*' || tokens[at] === '/')
      value *= tokens[at++] === '/' ? 1 / operand() : operand();
    return value;
  };
  const sum = (): number => {
    let value = product();
    while (tokens[at] === '+' || tokens[at] === '-') value += (tokens[at++] === '-' ? -1 : 1) * product();
    return value;
  };
  const value = sum();
  return at === tokens.length ? value : Number.NaN;
}
/** SUM, a range or a cell (not a function's name such as LOG10, nor another sheet's), a number, or any one character. */
const FORMULA_TOKEN = /SUM\(|[A-Z]{1,3}\d+(?::[A-Z]{1,3}\d+)?(?![\w(!])|[\d.]+(?:E[+-]?\d+)?|\S/g;

/** A range's corners (`B2:D3`, or one cell `B2`), counting from 0. */
function rangeOf(reference: string): CellRange | undefined {
  const [, left = '', top = '', right = left, bottom = top] =
    /^([A-Z]{1,3})(\d+)(?::([A-Z]{1,3})(\d+))?$/.exec(reference) ?? [];
  if (top === '') return undefined;
  return { top: +top - 1, left: columnOf(left), bottom: +bottom - 1, right: columnOf(right) };
}

/** A cell's place as one number (a sheet has at most 16,384 columns). */
const placeKey = (row: number, column: number) => row * 16_384 + column;
const within = (cell: CellRange, { top, left, bottom, right }: CellRange) =>
  cell.top >= top && cell.top <= bottom && cell.left >= left && cell.left <= right;

/** A `;` between a format's sections: one outside quotes. */
const SECTION_BREAK = /;(?=(?:[^"]*"[^"]*")*[^"]*$)/;

/** A cell's column from its letters, counting from 0 (`A` 0, `AA` 26). */
const columnOf = (letters: string) =>
  [...letters].reduce((index, letter) => index * 26 + letter.charCodeAt(0) - 64, 0) - 1;

/** Cells merged across rows (`D2:D3`): one value shown for several rows, stored in the first only. */
export type CellRange = { top: number; bottom: number; left: number; right: number };
export type MergedRange = CellRange & { ref: string };

/** The workbook's sheets, and of the first: whether hidden, cells not to be read, merged ranges, hidden rows. */
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
  // Excel keeps a calculation chain of what it calculated: other programs (LibreOffice, Gnumeric) may save
  // a formula's value as they loaded it, so there only a value petinv works out is believed.
  const calculatedByExcel =
    !!files['xl/calcChain.xml'] && !/manual/.test(attribute(workbook, 'calcMode', 'calcPr') ?? '');
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
  const formats = numberFormats(files['xl/styles.xml']);
  // A sheet set to show no zeros (Excel's option, showZeros="0") shows a 0 as nothing, whatever its format.
  const zerosHidden = /^(0|false)$/.test(attribute(xml, 'showZeros', 'sheetView') ?? '');
  for (const [, attributes = ''] of xml.matchAll(/<(?:[\w.-]+:)?row\b([^>]*)>/g))
    if (/^(1|true)$/.test(attribute(attributes, 'hidden') ?? ''))
      hiddenRows.add(Number(attribute(attributes, 'r')) - 1);
  for (const [, attributes = ''] of xml.matchAll(element('mergeCell'))) {
    const ref = attribute(attributes, 'ref') ?? '';
    const range = rangeOf(ref);
    if (range && range.bottom > range.top) merged.push({ ref, ...range });
  }
  // Cells a conditional format may show otherwise (`;;;` for a zero): whether its condition holds is not read.
  const conditional: (CellRange & { code: string })[] = [];
  for (const [, attributes = '', rules = ''] of xml.matchAll(element('conditionalFormatting')))
    for (const [, rule = '', bars = ''] of rules.matchAll(element('cfRule'))) {
      // A data bar or icon set may show itself instead of the value (showValue="0").
      const code =
        formats.conditional[Number(attribute(rule, 'dxfId'))] ??
        (attribute(bars, 'showValue') === '0' ? ';;;' : undefined);
      for (const range of code ? (attribute(attributes, 'sqref') ?? '').split(/\s+/).map(rangeOf) : [])
        if (range) conditional.push({ code: xmlText(code as string), ...range });
    }
  const mark = (map: UnreadCells, { top, left }: CellRange, text: string) =>
    map.set(top, (map.get(top) ?? new Map<number, string>()).set(left, text));
  // Each cell's value (text as text), for the formulas' check; kept only where there are formulas.
  const saved = /<(?:[\w.-]+:)?f\b/.test(xml) ? new Map<number, number | string>() : undefined;
  const calculated: [cell: CellRange, formula: string, value: number][] = [];
  for (const [, attributes = '', content = ''] of xml.matchAll(element('c'))) {
    const cell = rangeOf(attribute(attributes, 'r') ?? '');
    // Allowed, and rare: read-excel-file fails on it, and such a cell could not be placed here either.
    if (!cell) throw new Error('its cells do not say where they are (no r attribute)');
    const [formula] = content.matchAll(element('f'));
    const [value] = content.matchAll(element('v'));
    const text = xmlText(value?.[2] ?? '');
    const type = attribute(attributes, 't');
    const number = (type ?? 'n') === 'n' ? Number(text) : Number.NaN;
    // A formula's value is one only where Excel calculated it.
    saved?.set(
      placeKey(cell.top, cell.left),
      formula && !calculatedByExcel ? Number.NaN : Number.isNaN(number) ? text : number,
    );
    // An empty text result (t="str", as Excel saves ="") is a value; an empty number is none (openpyxl).
    const read =
      type !== 'e' && (formula === undefined || (!stale && (text !== '' || (value && type === 'str'))));
    if (!read) mark(unread, cell, type === 'e' ? text : `=${xmlText(formula?.[2] || '…')}`);
    else if (formula) calculated.push([cell, xmlText(formula[2] ?? ''), number]);
    const format = formats.cells[Number(attribute(attributes, 's') ?? 0)];
    // Text a format's fourth section leaves out (`;;;`) shows nothing, as a number there would.
    if (read && type !== undefined && type !== 'n' && format?.split(SECTION_BREAK)[3]?.trim() === '')
      mark(formatted, cell, '');
    if (!read || Number.isNaN(number) || text === '') continue;
    const rule = conditional.find(
      (each) => within(cell, each) && shownOtherwise(each.code, number) !== undefined,
    );
    const shows =
      (zerosHidden && number === 0 ? '' : format && shownOtherwise(format, number)) ??
      (rule && `${rule.code}, when its condition holds`);
    if (shows !== undefined) mark(formatted, cell, shows);
  }
  // Every sum's cells, counted across the workbook: a hostile one's sums take no hour.
  const budget = { cells: 1e7 };
  for (const [cell, formula, value] of calculated) {
    const result = calculate(formula, saved ?? new Map(), budget);
    const agrees = Math.abs(result - value) <= 1e-9 * Math.max(1, Math.abs(result));
    if (Number.isFinite(result) ? !agrees : !calculatedByExcel) mark(unread, cell, `=${formula}`);
  }
  return { sheets, firstHidden, chart, shown, date1904, unread, formatted, merged, hiddenRows };
}
