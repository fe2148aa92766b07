import { INT64_MAX, INT64_MIN, type InventoryItem, PET_STATUSES, type PetStatus } from './schemas';

/**
 * JSON.parse turns every number into a double, which cannot hold a petId above 2^53. Node 20 has no
 * JSON.parse source access, and a full lossless parser is several times slower on a million items.
 * So the text is parsed as it is, and then the number tokens of the `petId` and `quantity` keys are
 * read from the text in document order (a regular expression run over it, copying nothing) and laid
 * over the parsed values: a petId becomes the bigint its digits say, exactly.
 *
 * Each token must belong to the value it is laid over (the same key, the same double) and every token
 * must be used, else the text has keys this cannot pair up exactly (a key written twice, or with
 * escapes), and it is refused rather than guessed. The pattern only matches a key: an unescaped
 * `"petId"` followed by `:` cannot stand inside a JSON string.
 *
 * A petId or quantity written other than as a JSON integer (`5.0`, `5e0`) is left as its text, for the
 * schemas to refuse; a quantity past 2^53 keeps its rounded double, which the schemas refuse too.
 */
const NUMBER_FIELD = /"(petId|quantity)"\s*:\s*(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/g;
const JSON_INTEGER = /^-?\d+$/;

export function parseInventoryJson(text: string): unknown {
  const value: unknown = JSON.parse(text);
  const tokens = new RegExp(NUMBER_FIELD);
  const unpaired = () =>
    new SyntaxError('a "petId" or "quantity" key is written twice or with escapes; cannot read it exactly');

  const overlay = (node: object) => {
    if (Array.isArray(node)) {
      for (const element of node) if (element !== null && typeof element === 'object') overlay(element);
      return;
    }
    const record = node as Record<string, unknown>;
    for (const key in record) {
      const field = record[key];
      if (typeof field === 'number') {
        if (key !== 'petId' && key !== 'quantity') continue;
        const match = tokens.exec(text);
        const token = match?.[2] ?? '';
        if (match?.[1] !== key || Number(token) !== field) throw unpaired();
        if (key === 'petId') record.petId = JSON_INTEGER.test(token) ? BigInt(token) : token;
        else if (!JSON_INTEGER.test(token)) record.quantity = token;
      } else if (field !== null && typeof field === 'object') overlay(field);
    }
  };
  if (value !== null && typeof value === 'object') overlay(value);
  if (tokens.exec(text) !== null) throw unpaired();
  return value;
}

/**
 * The exact wire form of an item; petId is written as a bare integer, never rounded. The server's answers
 * and the data file's journal lines use this template rather than stringifyJson: it is their hot path
 * (every GET and PATCH), and an item's three fields need no general writer. Everything else petinv
 * prints as JSON goes through stringifyJson.
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

const CANONICAL_ITEM = new RegExp(
  `^\\{"petId":(-?(?:0|[1-9]\\d{0,18})),"quantity":(-?(?:0|[1-9]\\d{0,15})),"status":"(${PET_STATUSES.join('|')})"\\}$`,
);

/**
 * The item when `text` is exactly its wire form as serializeItem writes it (what petinv serve answers a
 * PATCH with) and every rule of InventoryItemResponse holds; else undefined, and the caller takes the
 * general path (parseInventoryJson and the schema), which then gives the same item or names the problem.
 * A bulk run reads one such answer per update: this costs a regular expression instead of a parse, an
 * overlay and a schema walk.
 */
export function readCanonicalItem(text: string): InventoryItem | undefined {
  const match = CANONICAL_ITEM.exec(text);
  if (match === null) return undefined;
  const petId = BigInt(match[1] as string);
  const quantity = Number(match[2]);
  if (petId < INT64_MIN || petId > INT64_MAX || !Number.isSafeInteger(quantity)) return undefined;
  return { petId, quantity, status: match[3] as PetStatus };
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

/**
 * JSON text of any value petinv writes, bigints included: a bigint is written as the integer it is
 * (JSON.stringify refuses bigints, and a double would round a petId above 2^53). As JSON.stringify,
 * undefined members are left out and a number that is not finite is null.
 */
export function stringifyJson(value: unknown, style: JsonStyle = {}, level = 0): string {
  const { paint } = style;
  switch (typeof value) {
    case 'bigint':
      return paint ? paint.number(String(value)) : String(value);
    case 'number': {
      const text = Number.isFinite(value) ? String(value) : 'null';
      return paint ? (text === 'null' ? paint.literal(text) : paint.number(text)) : text;
    }
    case 'string':
      return paint ? paint.string(JSON.stringify(value)) : JSON.stringify(value);
    case 'boolean':
      return paint ? paint.literal(String(value)) : String(value);
    case 'object':
      break;
    default:
      return paint ? paint.literal('null') : 'null';
  }
  if (value === null) return paint ? paint.literal('null') : 'null';
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
    const name = JSON.stringify(key);
    members.push(`${paint ? paint.key(name) : name}${colon}${stringifyJson(member, style, level + 1)}`);
  }
  if (members.length === 0) return '{}';
  return `{${inner}${members.join(`,${inner}`)}${outer}}`;
}
