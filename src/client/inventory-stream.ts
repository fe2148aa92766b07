import {
  BACKSLASH,
  CLOSE_ARRAY,
  CLOSE_OBJECT,
  COMMA,
  ITEM_FORM,
  isJsonSpace,
  isWithinRanges,
  matchedItem,
  OPEN_ARRAY,
  OPEN_OBJECT,
  parseInventoryJson,
  QUOTE,
} from '../contract/json';
import type { InventoryItem } from '../contract/schemas';

/**
 * GET /inventory's answer parsed as it arrives, each chunk's complete items handed out as one batch once
 * all passed the contract: a million pets cost what a thousand do. A scanner walks the array and checks
 * what no one element shows (the `[`, no empty element, the `]` and nothing after it). An element in
 * ITEM_FORM is read by a regular expression, its ranges checked by hand (a test holds that to
 * InventoryItemResponse); any other goes to parseInventoryJson and the schema, which word errors.
 */

/** What is wrong with an answer, in the words of a contract error. */
export class InventoryStreamError extends Error {}

const ONLY_SPACE = /^[ \n\r\t]*$/;
const NOT_SPACE = /[^ \n\r\t]/;
/** A first character that starts some JSON value other than an array. */
const OTHER_JSON_START = /^[{"\-0-9tfn]/;
const USUAL_ITEM = new RegExp(ITEM_FORM, 'y');

/** The scanner's state between pieces of the body: where it is in the array, and what waits to be checked. */
class InventoryScanner {
  phase: 'before' | 'inside' | 'after' = 'before';
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** The current element has begun (a character other than white space). */
  private content = false;
  /** The current element was read whole by USUAL_ITEM; only white space may follow it. */
  private usual = false;
  private commas = 0;
  /** The current element's text in earlier pieces, when it is read by the general path. */
  private elementPieces: string[] = [];
  /** Elements for the general path, parsed together at the end of each piece, in order. */
  private general: string[] = [];
  /** Values of this piece's elements, in order; checked before they are handed out. */
  private values: unknown[] = [];
  /** Where `values` holds one that is not a usual item within the contract's ranges: the schema judges it. */
  private suspects: number[] = [];
  items = 0;

  fail(message: string): InventoryStreamError {
    return new InventoryStreamError(message);
  }

  /** Reads a piece of the body; true when it completed elements that are waiting for `check`. */
  take(text: string): boolean {
    let piece = text;
    if (this.phase === 'after') {
      this.checkTrailing(piece);
      return false;
    }
    if (this.phase === 'before') {
      const start = piece.search(NOT_SPACE);
      if (start < 0) return false;
      if (piece.charCodeAt(start) !== OPEN_ARRAY)
        throw this.fail(
          OTHER_JSON_START.test(piece.slice(start, start + 1))
            ? 'body: must be array'
            : 'not JSON (it does not start with [)',
        );
      this.phase = 'inside';
      this.depth = 1;
      piece = piece.slice(start + 1);
    }
    const closedAt = this.scan(piece);
    if (closedAt >= 0) this.checkTrailing(piece.slice(closedAt + 1));
    return this.values.length > 0 || this.general.length > 0;
  }

  /** Checks the elements read so far against the contract and hands them out as one batch. */
  async check(): Promise<InventoryItem[]> {
    this.parseGeneral();
    const batch = this.values;
    this.values = [];
    const suspected = this.suspects;
    this.suspects = [];
    if (suspected.length > 0) {
      // Loaded only when needed: most lists never need it, and a CLI's start-up pays for every module.
      const { describeIssues, InventoryItemResponse } = await import('../contract/schemas');
      // In order, so the error names the first item at fault, by its place in the whole list.
      for (const index of suspected) {
        const parsed = InventoryItemResponse.safeParse(batch[index]);
        if (!parsed.success) throw this.fail(describeIssues(parsed.error, [this.items + index]));
        batch[index] = parsed.data;
      }
    }
    this.items += batch.length;
    return batch as InventoryItem[];
  }

  /** At the end of the body: refuses one that never opened or never closed its array. */
  finish(): void {
    if (this.phase === 'before') throw this.fail('not JSON (the body is empty)');
    if (this.phase === 'inside')
      throw this.fail(
        `not JSON (the body ends before its array is closed, after ${this.items} ${this.items === 1 ? 'item' : 'items'})`,
      );
  }

  /** Reads a piece of text inside the array; returns where the array closed in it, or -1. */
  private scan(piece: string): number {
    /** Where the current element (read by the general path) starts in this piece. */
    let start = 0;
    for (let i = 0; i < piece.length; i++) {
      const code = piece.charCodeAt(i);
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (code === BACKSLASH) this.escaped = true;
        else if (code === QUOTE) this.inString = false;
      } else if (this.depth > 1) {
        if (code === QUOTE) this.inString = true;
        else if (code === OPEN_OBJECT || code === OPEN_ARRAY) this.depth++;
        else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) this.depth--;
      } else if (code === COMMA) {
        if (!this.content) throw this.fail('not JSON (an empty element in the array)');
        this.endElement(piece, start, i);
        this.commas++;
      } else if (code === CLOSE_ARRAY) {
        if (this.content) this.endElement(piece, start, i);
        else if (this.commas > 0) throw this.fail('not JSON (a comma before the end of the array)');
        this.phase = 'after';
        return i;
      } else if (isJsonSpace(code)) {
        // Between elements, or inside one.
      } else if (this.usual) {
        throw this.fail(
          `not JSON (unexpected ${JSON.stringify(piece[i])} after item ${this.items + this.values.length})`,
        );
      } else if (!this.content) {
        this.content = true;
        if (this.readUsualItem(piece, i)) i = USUAL_ITEM.lastIndex - 1;
        else {
          start = i;
          this.enterElement(code);
        }
      } else this.enterElement(code);
    }
    if (this.content && !this.usual) this.elementPieces.push(piece.slice(start));
    return -1;
  }

  /** Reads the element at `at` whole when it has the usual form; false when the general path must. */
  private readUsualItem(piece: string, at: number): boolean {
    USUAL_ITEM.lastIndex = at;
    const usualItem = USUAL_ITEM.exec(piece);
    if (!usualItem) return false;
    this.parseGeneral();
    const item = matchedItem(usualItem);
    if (!isWithinRanges(item)) this.suspects.push(this.values.length);
    this.values.push(item);
    this.usual = true;
    return true;
  }

  /** A character of an element read by the general path, at the array's own depth. */
  private enterElement(code: number): void {
    if (code === QUOTE) this.inString = true;
    else if (code === OPEN_OBJECT || code === OPEN_ARRAY) this.depth++;
    else if (code === CLOSE_OBJECT) throw this.fail('not JSON (an unbalanced "}")');
  }

  private endElement(piece: string, start: number, end: number): void {
    if (!this.usual) {
      const text = piece.slice(start, end);
      this.general.push(this.elementPieces.length === 0 ? text : this.elementPieces.join('') + text);
      this.elementPieces = [];
    }
    this.usual = false;
    this.content = false;
  }

  private parseGeneral(): void {
    if (this.general.length === 0) return;
    let parsed: unknown[];
    try {
      parsed = parseInventoryJson(`[${this.general.join(',')}]`) as unknown[];
    } catch (error) {
      throw this.fail(`not JSON (${(error as Error).message})`);
    }
    this.general = [];
    for (const value of parsed) {
      this.suspects.push(this.values.length);
      this.values.push(value);
    }
  }

  private checkTrailing(text: string): void {
    if (!ONLY_SPACE.test(text)) throw this.fail('not JSON (more text after the array)');
  }
}

export async function* parseInventoryStream(
  chunks: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>,
): AsyncGenerator<InventoryItem[], void, undefined> {
  const decoder = new TextDecoder();
  const scanner = new InventoryScanner();
  // Each batch is held until the next piece has been read and checked: a body that breaks within its
  // first piece (every small answer) is refused before anything was handed out.
  let held: InventoryItem[] | undefined;
  for await (const chunk of chunks) {
    const text = typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    const batch = text.length > 0 && scanner.take(text) ? await scanner.check() : undefined;
    if (batch === undefined || batch.length === 0) continue;
    if (held) yield held;
    held = batch;
  }
  const last = scanner.take(decoder.decode()) ? await scanner.check() : undefined;
  scanner.finish();
  if (held) yield held;
  if (last && last.length > 0) yield last;
}
