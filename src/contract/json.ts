import { INT64_MAX, INT64_MIN, PET_STATUSES, type PetStatus } from './rules';
import type { InventoryItem } from './schemas';

/**
 * JSON.parse turns every number into a double, which cannot hold a petId above 2^53, and its reviver made
 * a million-item parse ten times slower (2.6 s against 0.3). So this reads the text in one pass, and the
 * number of a `petId` key becomes the bigint its digits say (issue 21). A key written twice in one object
 * is refused. A petId or quantity not written as a JSON integer is left as its text, a quantity past 2^53
 * as its rounded double, for the schemas to refuse. Text that is not JSON throws JSON.parse's own error.
 */
const JSON_INTEGER = /^-?\d+$/;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
/** The character codes of JSON's structure, shared by the exact reader and the streaming scanner. */
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
const COLON = 0x3a;
export const COMMA = 0x2c;
export const OPEN_OBJECT = 0x7b;
export const CLOSE_OBJECT = 0x7d;
export const OPEN_ARRAY = 0x5b;
export const CLOSE_ARRAY = 0x5d;
const MINUS = 0x2d;
export const isJsonSpace = (code: number) => code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;

export function parseInventoryJson(text: string): unknown {
  try {
    return new ExactReader(text).read();
  } catch (error) {
    if (error instanceof RangeError) throw new SyntaxError('not read: the JSON is nested too deeply');
    throw error;
  }
}

class ExactReader {
  private at = 0;
  constructor(private readonly text: string) {}

  read(): unknown {
    const value = this.value(undefined);
    this.space();
    if (this.at !== this.text.length) this.fail();
    return value;
  }

  /** Throws JSON.parse's own error for the text (its words and position); the reader's only if it has none. */
  private fail(): never {
    JSON.parse(this.text);
    throw new SyntaxError(`Unexpected token in JSON at position ${this.at}`);
  }

  private space(): void {
    const { text } = this;
    let code = text.charCodeAt(this.at);
    while (isJsonSpace(code)) code = text.charCodeAt(++this.at);
  }

  private string(): string {
    const { text } = this;
    const start = ++this.at;
    let at = start;
    let escaped = false;
    for (;;) {
      const code = text.charCodeAt(at);
      if (code === QUOTE) break;
      if (code === BACKSLASH) {
        escaped = true;
        at += 2;
      } else if (code < 0x20 || Number.isNaN(code)) {
        this.at = at;
        this.fail();
      } else at++;
    }
    this.at = at + 1;
    // Escapes are rare in an inventory: JSON.parse decodes them (and refuses a bad one).
    return escaped ? (JSON.parse(text.slice(start - 1, at + 1)) as string) : text.slice(start, at);
  }

  private value(key: string | undefined): unknown {
    this.space();
    const { text } = this;
    const code = text.charCodeAt(this.at);
    if (code === OPEN_OBJECT) return this.object();
    if (code === OPEN_ARRAY) return this.array();
    if (code === QUOTE) return this.string();
    if (code === MINUS || (code >= 0x30 && code <= 0x39)) {
      NUMBER.lastIndex = this.at;
      if (!NUMBER.test(text)) this.fail();
      const token = text.slice(this.at, NUMBER.lastIndex);
      this.at = NUMBER.lastIndex;
      if (key === 'petId') return JSON_INTEGER.test(token) ? BigInt(token) : token;
      if (key === 'quantity' && !JSON_INTEGER.test(token)) return token;
      return Number(token);
    }
    const literal = LITERALS.find(([word]) => text.startsWith(word, this.at)) ?? this.fail();
    this.at += literal[0].length;
    return literal[1];
  }

  /** Steps over an object's or array's opening; true when `close` follows at once (it is empty). */
  private opensEmpty(close: number): boolean {
    this.at++;
    this.space();
    if (this.text.charCodeAt(this.at) !== close) return false;
    this.at++;
    return true;
  }

  /** After a member: true at `close`, false at a comma; anything else fails. */
  private closes(close: number): boolean {
    this.space();
    const code = this.text.charCodeAt(this.at);
    if (code !== close && code !== COMMA) this.fail();
    this.at++;
    return code === close;
  }

  private object(): Record<string, unknown> {
    const { text } = this;
    const record: Record<string, unknown> = {};
    if (this.opensEmpty(CLOSE_OBJECT)) return record;
    do {
      this.space();
      if (text.charCodeAt(this.at) !== QUOTE) this.fail();
      const keyAt = this.at;
      const name = this.string();
      this.space();
      if (text.charCodeAt(this.at) !== COLON) this.fail();
      this.at++;
      const member = this.value(name);
      if (Object.hasOwn(record, name))
        throw new SyntaxError(
          `the key ${JSON.stringify(name)} is written twice in one object (at position ${keyAt})`,
        );
      // JSON.parse makes "__proto__" an own key, as any other; an assignment would set the prototype.
      if (name === '__proto__') Object.defineProperty(record, name, { value: member, ...PLAIN_MEMBER });
      else record[name] = member;
    } while (!this.closes(CLOSE_OBJECT));
    return record;
  }

  private array(): unknown[] {
    const list: unknown[] = [];
    if (this.opensEmpty(CLOSE_ARRAY)) return list;
    do list.push(this.value(undefined));
    while (!this.closes(CLOSE_ARRAY));
    return list;
  }
}

const LITERALS = [
  ['true', true],
  ['false', false],
  ['null', null],
] as const;
const PLAIN_MEMBER = { enumerable: true, writable: true, configurable: true };

/**
 * The exact wire form of an item, its petId a bare integer. The server's answers and the journal's lines
 * use this template rather than stringifyJson: it is their hot path (every GET and PATCH).
 */
export function serializeItem(item: InventoryItem): string {
  return `{"petId":${item.petId},"quantity":${item.quantity},"status":"${item.status}"}`;
}

export function serializeItems(items: readonly InventoryItem[]): string {
  return `[${items.map(serializeItem).join(',')}]`;
}

export function serializeUpdate(quantity: number): string {
  return `{"quantity":${quantity}}`;
}

/**
 * An item as serializeItem writes it, the form a service usually writes: JSON integers only (no leading
 * zero, no fraction), at most 19 digits of petId and 16 of quantity; anything longer takes the general
 * path (parseInventoryJson and the schema), which judges it.
 */
export const ITEM_FORM = `\\{"petId":(-?(?:0|[1-9]\\d{0,18})),"quantity":(-?(?:0|[1-9]\\d{0,15})),"status":"(${PET_STATUSES.join('|')})"\\}`;
const CANONICAL_ITEM = new RegExp(`^${ITEM_FORM}$`);

/** The item a match of ITEM_FORM holds, its petId exact. */
export const matchedItem = (match: RegExpExecArray): InventoryItem => ({
  petId: BigInt(match[1] as string),
  quantity: Number(match[2]),
  status: match[3] as PetStatus,
});

/** Whether a matched item's petId and quantity are within the contract's ranges (the rest its form says). */
export const isWithinRanges = ({ petId, quantity }: InventoryItem) =>
  petId >= INT64_MIN && petId <= INT64_MAX && Number.isSafeInteger(quantity);

/**
 * The item when `text` is exactly in ITEM_FORM (what petinv serve answers a PATCH with) and within the
 * contract's ranges; else undefined, for the general path. A bulk run reads one such answer per update.
 */
export function readCanonicalItem(text: string): InventoryItem | undefined {
  const match = CANONICAL_ITEM.exec(text);
  const item = match === null ? undefined : matchedItem(match);
  return item && isWithinRanges(item) ? item : undefined;
}

/** How stringifyJson lays out its text: indented for a person, and coloured for a terminal. */
export interface JsonStyle {
  /** Spaces per level; 0 (the default) is compact, one line. */
  indent?: number;
  /** Colours for a terminal, each given the JSON text of a key, a string, a number or a literal. */
  paint?: {
    key(text: string): string;
    string(text: string): string;
    number(text: string): string;
    literal(text: string): string;
  };
}

const same = (text: string) => text;
const UNPAINTED: Required<JsonStyle>['paint'] = { key: same, string: same, number: same, literal: same };

/**
 * JSON text of any value petinv writes, bigints included: a bigint is written as the integer it is
 * (JSON.stringify refuses bigints, and a double would round a petId above 2^53). As JSON.stringify,
 * undefined members are left out and a number that is not finite is null.
 */
export function stringifyJson(value: unknown, style: JsonStyle = {}, level = 0): string {
  const paint = style.paint ?? UNPAINTED;
  switch (typeof value) {
    case 'bigint':
      return paint.number(String(value));
    case 'number':
      return Number.isFinite(value) ? paint.number(String(value)) : paint.literal('null');
    case 'string':
      return paint.string(JSON.stringify(value));
    case 'boolean':
      return paint.literal(String(value));
    case 'object':
      break;
    default:
      return paint.literal('null');
  }
  if (value === null) return paint.literal('null');
  const indent = style.indent ?? 0;
  const inner = indent > 0 ? `\n${' '.repeat(indent * (level + 1))}` : '';
  const outer = indent > 0 ? `\n${' '.repeat(indent * level)}` : '';
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    const members = value.map((element) => stringifyJson(element ?? null, style, level + 1));
    return `[${inner}${members.join(`,${inner}`)}${outer}]`;
  }
  const members: string[] = [];
  const colon = indent > 0 ? ': ' : ':';
  for (const [key, member] of Object.entries(value as Record<string, unknown>)) {
    if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
    members.push(`${paint.key(JSON.stringify(key))}${colon}${stringifyJson(member, style, level + 1)}`);
  }
  if (members.length === 0) return '{}';
  return `{${inner}${members.join(`,${inner}`)}${outer}}`;
}
