import { parseInventoryJson } from './json';
import { INT64_MAX, INT64_MIN, type InventoryItem, QUANTITY_MAX } from './schemas';

/**
 * GET /inventory's answer parsed as it arrives: a JSON array read chunk by chunk, each chunk's complete
 * items handed out as one batch once every one of them has passed the contract (InventoryListResponse,
 * the schema a whole answer is checked with). Memory holds a chunk and one unfinished item, never the
 * answer, so a million pets cost what a thousand do.
 *
 * A scanner walks the array's elements (depth, strings, commas). An element in the exact form a service
 * usually writes, `{"petId":1,"quantity":2,"status":"sold"}`, is read by one anchored regular expression
 * (its petId straight from its digits, as a bigint); any other element (white space, another key order,
 * an escape, anything invalid) is cut out by the scanner and parsed by parseInventoryJson, JSON.parse with
 * exact petIds, which also reports its syntax errors. The scanner itself checks what no single element
 * shows: the opening `[`, no empty element, the closing `]` and nothing after it.
 *
 * Every item is checked against the contract. An element of the usual form already has the schema's
 * types (its petId digits, its quantity a JSON integer, its status one of the three), so what is left to
 * check is its two ranges, done here by hand: InventoryItemResponse answers the same for such an item
 * (test/unit/inventory-stream.test.ts compares the two), at a fraction of the cost on a million pets. Any
 * other element (one cut by a chunk's end among them), and an item out of range, is checked by the schema
 * itself, which also words the error.
 */

/** What is wrong with an answer, in the words of a contract error; `items` whole items came before it. */
export class InventoryStreamError extends Error {
  constructor(
    message: string,
    readonly items: number,
  ) {
    super(message);
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const isSpace = (code: number) => code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
const ONLY_SPACE = /^[ \n\r\t]*$/;
const NOT_SPACE = /[^ \n\r\t]/;
/** A first character that starts some JSON value other than an array. */
const OTHER_JSON_START = /^[{"\-0-9tfn]/;
/**
 * The usual form of an item. Only JSON integers match (no leading zero, no fraction), at most 19 digits
 * of petId and 16 of quantity: anything longer is read by the general path, and the schema judges both.
 */
const USUAL_ITEM =
  /\{"petId":(-?(?:0|[1-9]\d{0,18})),"quantity":(-?(?:0|[1-9]\d{0,15})),"status":"(available|pending|sold)"\}/y;

type Phase = 'before' | 'inside' | 'after';

export async function* parseInventoryStream(
  chunks: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>,
): AsyncGenerator<InventoryItem[], void, undefined> {
  const decoder = new TextDecoder();
  let phase: Phase = 'before';
  let depth = 0;
  let inString = false;
  let escaped = false;
  /** The current element has begun (a character other than white space). */
  let content = false;
  /** The current element was read whole by USUAL_ITEM; only white space may follow it. */
  let usual = false;
  let commas = 0;
  /** The current element's text in earlier pieces, when it is read by the general path. */
  let elementPieces: string[] = [];
  /** Elements for the general path, parsed together at the end of each piece, in order. */
  let general: string[] = [];
  /** Values of this piece's elements, in order; checked before they are handed out. */
  let values: unknown[] = [];
  /** Where `values` holds one that is not a usual item within the contract's ranges: the schema judges it. */
  let suspects: number[] = [];
  let items = 0;
  const fail = (message: string) => new InventoryStreamError(message, items);

  function parseGeneral() {
    if (general.length === 0) return;
    let parsed: unknown[];
    try {
      parsed = parseInventoryJson(`[${general.join(',')}]`) as unknown[];
    } catch (error) {
      throw fail(`not JSON (${(error as Error).message})`);
    }
    general = [];
    for (const value of parsed) {
      suspects.push(values.length);
      values.push(value);
    }
  }

  function endElement(piece: string, start: number, end: number) {
    if (!usual) {
      const text = piece.slice(start, end);
      general.push(elementPieces.length === 0 ? text : elementPieces.join('') + text);
      elementPieces = [];
    }
    usual = false;
    content = false;
  }

  /** Reads a piece of text inside the array; returns where the array closed in it, or -1. */
  function scan(piece: string): number {
    /** Where the current element (read by the general path) starts in this piece. */
    let start = 0;
    for (let i = 0; i < piece.length; i++) {
      const code = piece.charCodeAt(i);
      if (inString) {
        if (escaped) escaped = false;
        else if (code === BACKSLASH) escaped = true;
        else if (code === QUOTE) inString = false;
      } else if (depth > 1) {
        if (code === QUOTE) inString = true;
        else if (code === OPEN_OBJECT || code === OPEN_ARRAY) depth++;
        else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) depth--;
      } else if (code === COMMA) {
        if (!content) throw fail('not JSON (an empty element in the array)');
        endElement(piece, start, i);
        commas++;
      } else if (code === CLOSE_ARRAY) {
        if (content) endElement(piece, start, i);
        else if (commas > 0) throw fail('not JSON (a comma before the end of the array)');
        phase = 'after';
        return i;
      } else if (isSpace(code)) {
        // Between elements, or inside one.
      } else if (usual) {
        throw fail(`not JSON (unexpected ${JSON.stringify(piece[i])} after item ${items + values.length})`);
      } else if (!content) {
        USUAL_ITEM.lastIndex = i;
        const usualItem = USUAL_ITEM.exec(piece);
        content = true;
        if (usualItem) {
          parseGeneral();
          const petId = BigInt(usualItem[1] as string);
          const quantity = Number(usualItem[2]);
          if (petId < INT64_MIN || petId > INT64_MAX || Math.abs(quantity) > QUANTITY_MAX)
            suspects.push(values.length);
          values.push({ petId, quantity, status: usualItem[3] });
          usual = true;
          i = USUAL_ITEM.lastIndex - 1;
        } else {
          start = i;
          if (code === QUOTE) inString = true;
          else if (code === OPEN_OBJECT || code === OPEN_ARRAY) depth++;
          else if (code === CLOSE_OBJECT) throw fail('not JSON (an unbalanced "}")');
        }
      } else if (code === QUOTE) inString = true;
      else if (code === OPEN_OBJECT || code === OPEN_ARRAY) depth++;
      else if (code === CLOSE_OBJECT) throw fail('not JSON (an unbalanced "}")');
    }
    if (content && !usual) elementPieces.push(piece.slice(start));
    return -1;
  }

  async function check(): Promise<InventoryItem[]> {
    parseGeneral();
    const batch = values;
    values = [];
    const suspected = suspects;
    suspects = [];
    if (suspected.length > 0) {
      // Loaded only when needed: most lists never need it, and a CLI's start-up pays for every module.
      const { describeIssues, InventoryItemResponse } = await import('./schemas');
      // In order, so the error names the first item at fault, by its place in the whole list.
      for (const index of suspected) {
        const parsed = InventoryItemResponse.safeParse(batch[index]);
        if (!parsed.success) throw fail(describeIssues(parsed.error, [items + index]));
        batch[index] = parsed.data;
      }
    }
    items += batch.length;
    return batch as InventoryItem[];
  }

  function checkTrailing(text: string) {
    if (!ONLY_SPACE.test(text)) throw fail('not JSON (more text after the array)');
  }

  /** Reads a piece of the body; true when it completed elements that are waiting for `check`. */
  function take(text: string): boolean {
    let piece = text;
    if (phase === 'after') {
      checkTrailing(piece);
      return false;
    }
    if (phase === 'before') {
      const start = piece.search(NOT_SPACE);
      if (start < 0) return false;
      if (piece.charCodeAt(start) !== OPEN_ARRAY) {
        throw fail(
          OTHER_JSON_START.test(piece.slice(start, start + 1))
            ? 'body: must be array'
            : 'not JSON (it does not start with [)',
        );
      }
      phase = 'inside';
      depth = 1;
      piece = piece.slice(start + 1);
    }
    const closedAt = scan(piece);
    if (closedAt >= 0) checkTrailing(piece.slice(closedAt + 1));
    return values.length > 0 || general.length > 0;
  }

  // Each batch is held until the next piece has been read and checked: a body that breaks within its
  // first piece (every small answer) is refused before anything was handed out.
  let held: InventoryItem[] | undefined;
  for await (const chunk of chunks) {
    const text = typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    const batch = text.length > 0 && take(text) ? await check() : undefined;
    if (batch === undefined || batch.length === 0) continue;
    if (held) yield held;
    held = batch;
  }
  const last = take(decoder.decode()) ? await check() : undefined;
  if (phase === 'before') throw fail('not JSON (the body is empty)');
  if (phase === 'inside')
    throw fail(
      `not JSON (the body ends before its array is closed, after ${items} ${items === 1 ? 'item' : 'items'})`,
    );
  if (held) yield held;
  if (last && last.length > 0) yield last;
}
