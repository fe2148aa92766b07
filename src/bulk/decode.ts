import { isAscii, isUtf8 } from 'node:buffer';
import { TextDecoder } from 'node:util';
import { usageError } from '../errors';

/**
 * Bulk input's bytes as text, in the encodings docs/stock-take.md lists (one other than UTF-8 said in a
 * notice). Files that are no text at all are named, not read.
 */

const ZIP = Buffer.from('PK\u0003\u0004', 'latin1');
const OLE2 = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
const MARKUP = /^(?:\xef\xbb\xbf)?\s*<(\?xml|!doctype html|html|table)/i;
const SAVE_AS = 'save it as CSV (comma, semicolon or tab separated) or as an Excel workbook (.xlsx)';

/** How many first bytes tell a workbook, a zip or another binary file from text. */
export const SNIFF_BYTES = 4096;

/** What the first bytes say: a zip (an .xlsx, perhaps: checked once whole), text, or a binary file, refused. */
export function sniff(head: Buffer): 'zip' | 'text' {
  if (head.subarray(0, 4).equals(ZIP)) return 'zip';
  if (head.subarray(0, 8).equals(OLE2))
    refuse('is an old Excel workbook (.xls), one saved with a password, or another Office 97-2003 file');
  if (head.subarray(0, 5).toString('latin1') === '%PDF-') refuse('is a PDF document');
  // Markup is no sheet: its first line would be read as a header of `<!DOCTYPE` and `html>`.
  const markup = MARKUP.exec(head.toString('latin1', 0, 256))?.[1];
  if (markup)
    refuse(markup === '?xml' ? 'is XML (a flat .fods, an XML spreadsheet)' : 'is a web page (HTML)');
  const utf16 = (head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff);
  // Text has no NUL byte (but UTF-16 has them by nature); binary formats have them early.
  const bomless = [0, 1].some((at) => !head[at] && !head[at + 2] && head[1 - at] && head[3 - at]);
  if (!utf16 && head.subarray(0, SNIFF_BYTES).includes(0))
    refuse(bomless ? 'looks like UTF-16 text without its byte-order mark' : 'is a binary file, not text');
  return 'text';
}

/** A zip's bytes if they are an .xlsx workbook; any other zip is named by the parts it holds (plain text in a zip). */
export function checkWorkbook(bytes: Buffer): Buffer {
  const has = (part: string) => bytes.includes(part, 0, 'latin1');
  if (has('application/vnd.oasis.opendocument.spreadsheet'))
    refuse('is an OpenDocument spreadsheet (.ods, LibreOffice)');
  if (has('Index/Document.iwa')) refuse('is an Apple Numbers document (.numbers)');
  if (has('xl/workbook.xml')) return bytes;
  if (has('word/document.xml')) refuse('is a Word document (.docx)');
  refuse('is a zip archive, not a workbook petinv reads');
}

function refuse(what: string): never {
  throw usageError(`bulk input ${what}: ${SAVE_AS}. Nothing was sent`);
}

/** The length of `bytes` without a UTF-8 sequence cut off at its end (the rest comes with the next chunk). */
function completeLength(bytes: Buffer): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back] as number;
    if ((byte & 0xc0) === 0x80) continue;
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return length > back ? bytes.length - back : bytes.length;
  }
  return bytes.length;
}

/** Decodes chunk by chunk; `notice` says when the text turned out to be Windows-1252. */
export class TextInputDecoder {
  private decoder?: TextDecoder;
  private carry = Buffer.alloc(0);
  private offset = 0;
  private sawUtf8 = false;
  private started = false;
  notice?: string;

  // Lines ended by a CR alone: Excel for Mac's "CSV (Macintosh)", in Mac Roman.
  private readonly macLines: boolean;

  constructor(head: Buffer) {
    this.macLines = head.filter((byte) => byte === 0x0d).length > head.filter((byte) => byte === 0x0a).length;
    if (head[0] === 0xff && head[1] === 0xfe) this.decoder = new TextDecoder('utf-16le');
    else if (head[0] === 0xfe && head[1] === 0xff) this.decoder = new TextDecoder('utf-16be');
  }

  decode(chunk: Buffer, end = false): string {
    const text = this.decodeBytes(chunk, end);
    if (this.started || text === '') return text;
    this.started = true;
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  }

  private decodeBytes(chunk: Buffer, end: boolean): string {
    // The UTF-16 and Windows-1252 decoders drop a byte-order mark themselves (ignoreBOM is off).
    if (this.decoder) return this.decoder.decode(chunk, { stream: !end });
    const bytes = this.carry.length === 0 ? chunk : Buffer.concat([this.carry, chunk]);
    const cut = end ? bytes.length : completeLength(bytes);
    const whole = bytes.subarray(0, cut);
    if (isUtf8(whole)) {
      this.carry = Buffer.from(bytes.subarray(cut));
      this.offset += cut;
      this.sawUtf8 ||= !isAscii(whole);
      return whole.toString('utf8');
    }
    this.decoder = new TextDecoder(this.macLines ? 'macintosh' : 'windows-1252');
    this.notice = `the input is not valid UTF-8${this.sawUtf8 ? ` after byte ${this.offset}` : ''}: read as ${this.macLines ? 'Mac Roman, as Excel for Mac\'s "CSV (Macintosh)"' : 'Windows-1252, as Excel\'s "CSV (Comma delimited)"'} writes it${this.sawUtf8 ? ' (the part before as UTF-8)' : ''}; save as "CSV UTF-8" to be sure`;
    return this.decoder.decode(bytes, { stream: !end });
  }
}
