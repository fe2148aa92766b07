/**
 * Text petinv did not write itself (a service's error message or body, a header value, a line of bulk
 * input) passes through here before it reaches a terminal, so that it cannot move the cursor, clear
 * the screen, set the window title, ring the bell or start a line of its own that looks like petinv's.
 */

// CSI (ESC [ … final byte, or 8-bit CSI), OSC and other strings to BEL or ESC \, 2- or 3-byte ESC sequences.
const ESCAPE_SEQUENCE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
  /\u001b\[[0-?]*[ -/]*[@-~]?|\u009b[0-?]*[ -/]*[@-~]?|(?:\u001b[\]PX^_]|[\u0090\u009d-\u009f])[^\u0007\u001b\u009c]*(?:\u0007|\u001b\\|\u009c)?|\u001b[ -/]*[0-~]?/g;
const LINE_BREAKS = /[\r\n\t\v\f\u0085\u2028\u2029]+/g;
/**
 * Characters that show nothing or turn the direction of what follows (zero-width and directional marks,
 * the others Unicode calls ignorable, the tag characters): removed, so that what a terminal shows is what
 * the text says, and a key cut up by them is found whole (issue 21).
 */
export const INVISIBLE_CHARACTERS =
  /\u034f|\u17b4|\u17b5|\u180b|\u180c|\u180d|\u180f|[\u00ad\u061c\u115f\u1160\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2069\u3164\ufeff\uffa0\ufff9-\ufffb]|\udb40[\udc00-\udc7f]/g;
/** DEL, the C1 controls and the bidirectional overrides that make text read differently than it is. */
export const WIDE_CONTROL_CHARACTERS = /[\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
// The C0 controls too.
const CONTROL_CHARACTERS = new RegExp(`[\\u0000-\\u001f${WIDE_CONTROL_CHARACTERS.source.slice(1)}`, 'g');

/** Outside text as one printable line of at most `maxLength` characters; control characters show as �. */
export function printable(text: string, maxLength = 200): string {
  // Only a bounded prefix can be shown, so only that much is cleaned (a body may be megabytes).
  let line = text
    .slice(0, maxLength * 4 + 64)
    .replace(ESCAPE_SEQUENCE, '')
    .replace(INVISIBLE_CHARACTERS, '')
    .replace(LINE_BREAKS, ' ')
    .replace(CONTROL_CHARACTERS, '\ufffd')
    .replace(/ {2,}/g, ' ')
    .trim();
  if (line.length > maxLength || text.length > maxLength * 4 + 64) {
    let end = Math.min(line.length, maxLength - 1);
    // Never split a surrogate pair.
    if (/[\ud800-\udbff]/.test(line.charAt(end - 1))) end--;
    line = `${line.slice(0, end)}…`;
  }
  // A copy of its own: a slice would keep the whole text it came from alive (V8 shares the parent), so
  // each bad line of a bulk run, quoted in its message, would hold up to 64 KiB until the run ends.
  return Buffer.from(line, 'utf8').toString('utf8');
}

/**
 * A response header's value as text: both transports hand header bytes over one Latin-1 character each, so a
 * service's UTF-8 (an invisible U+200B is three bytes) would show as other characters, which printable()
 * neither removes nor sees through when it looks for the key. Bytes that are UTF-8 are read as UTF-8, as
 * the -v trace reads them; any others stay Latin-1, where printable() finds an 8-bit escape sequence.
 */
export function headerText(value: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: any character past ASCII
  if (!/[^\u0000-\u007f]/.test(value)) return value;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(value, 'latin1'));
  } catch {
    return value;
  }
}

export const REDACTED = '[redacted]';

/**
 * printable(), with each secret (the API key) shown as `[redacted]` wherever it appears: whole in the text,
 * rejoined once escape sequences or invisible characters between its characters are removed, or cut at the end of the line (a
 * service that echoes the key can place it where the line is cut, and its first characters would show).
 */
export function printableWithout(text: string, secrets: readonly string[], maxLength = 200): string {
  const hidden = secrets.filter((secret) => secret.length > 0);
  if (hidden.length === 0) return printable(text, maxLength);
  const redact = (shown: string) =>
    hidden.reduce((result, secret) => result.split(secret).join(REDACTED), shown);
  // As printable, only a bounded prefix is looked at; it reaches past printable's own by a secret's length,
  // so a secret that starts inside printable's window is whole in it.
  const window = maxLength * 4 + 64 + Math.max(...hidden.map((secret) => secret.length));
  const cut = text.length > window;
  // Once printable, a line break or a control character between a secret's characters shows as a space or
  // �, which would leave the key readable: matched with those between its characters too, and with any
  // other space (no-break, thin, ideographic), which shows as a space does.
  const literal = (character: string) => character.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
  const loose = hidden.map((secret) => new RegExp(Array.from(secret, literal).join('[\\s\ufffd]*'), 'g'));
  const redactLoose = (shown: string) =>
    loose.reduce((result, pattern) => result.replace(pattern, REDACTED), redact(shown));
  // An escape sequence inside a secret may end in one of its characters, which printable removes with it
  // (`\x9bK`, `\x1b[1K`, all after `\x1bP`): found before it too, a control and what may follow it allowed.
  const escaped = (secret: string) =>
    new RegExp(Array.from(secret, literal).join('(?:[\\x00-\\x1f\\x7f-\\x9f][ -~]?[0-?]*)?'), 'g');
  const shown = cut ? text.slice(0, window) : text;
  const raw = hidden.reduce((result, secret) => result.replace(escaped(secret), REDACTED), shown);
  let line = redactLoose(printable(raw, maxLength));
  // Redaction shortens the text, so printable may not see that it was cut: say so as printable would.
  if (cut && !line.endsWith('…')) line = `${line}…`;
  if (!line.endsWith('…')) return line;
  const before = line.slice(0, -1);
  for (const secret of hidden) {
    for (let length = Math.min(secret.length - 1, before.length); length > 0; length--)
      if (before.endsWith(secret.slice(0, length))) return `${before.slice(0, -length)}${REDACTED}…`;
  }
  return line;
}
