import { Help } from '@commander-js/extra-typings';
import type { HelpBlock, HelpTopic } from './topics';

/** Text between backticks is code; a terminal shows it plain. */
const plain = (text: string) => text.replace(/`([^`]*)`/g, '$1');

const help = new Help();
// Topics wrap however narrow the column, where commander's own help stops wrapping below 40.
help.minWidthToWrap = 0;

/** Greedy word wrap (commander's) to `width` columns after `lead`; the lines after the first are indented to match it. */
const wrap = (lead: string, text: string, width: number) =>
  lead + help.boxWrap(text, width - lead.length).replaceAll('\n', `\n${' '.repeat(lead.length)}`);

function blockText(block: HelpBlock, width: number): string {
  if ('paragraph' in block) return wrap('', plain(block.paragraph), width);
  if ('code' in block) return block.code.map((line) => `  ${line}`).join('\n');
  const { head, rows } = block.table;
  if (head.length === 2) {
    const first = Math.max(...rows.map((row) => plain(row[0] ?? '').length)) + 2;
    // On a narrow terminal, each term on a line of its own and its meaning below, as man does.
    if (first + 2 > width / 2)
      return rows
        .map((row) => `  ${plain(row[0] ?? '')}\n${wrap('      ', plain(row[1] ?? ''), width)}`)
        .join('\n');
    return rows
      .map((row) => wrap(`  ${plain(row[0] ?? '').padEnd(first)}`, plain(row[1] ?? ''), width))
      .join('\n');
  }
  // Wider tables read better on a terminal as one entry per row, a labelled line per column.
  const label = Math.max(...head.slice(1).map((name) => name.length)) + 2;
  return rows
    .map((row) =>
      [
        `  ${plain(row[0] ?? '')}`,
        ...head
          .slice(1)
          .map((name, column) =>
            wrap(`      ${`${name}:`.padEnd(label)}`, plain(row[column + 1] ?? ''), width),
          ),
      ].join('\n'),
    )
    .join('\n');
}

/** A topic as `petinv help NAME` prints it, wrapped to the terminal's width. */
export function topicText(topic: HelpTopic, width = 80): string {
  const columns = Math.max(40, width - 1);
  const body = topic.blocks.map((block) => blockText(block, columns)).join('\n\n');
  return `${wrap('', `petinv help ${topic.name}: ${topic.summary}`, columns)}\n\n${body}\n`;
}

const cell = (text: string) => text.replace(/\|/g, '\\|');

function blockMarkdown(block: HelpBlock): string {
  if ('paragraph' in block) return wrap('', block.paragraph, 104);
  if ('code' in block) return ['```sh', ...block.code, '```'].join('\n');
  const { head, rows } = block.table;
  const table = [head, ...rows].map((row) => row.map(cell));
  const widths = head.map((_, column) => Math.max(...table.map((row) => (row[column] ?? '').length)));
  const line = (row: readonly string[]) =>
    `| ${widths.map((width, column) => (row[column] ?? '').padEnd(width)).join(' | ')} |`;
  const [first, ...rest] = table;
  return [line(first ?? []), line(widths.map((width) => '-'.repeat(width))), ...rest.map(line)].join('\n');
}

/** A topic as the docs hold it, between its markers (src/program/manual.ts). */
export function topicMarkdown(topic: Pick<HelpTopic, 'blocks'>): string {
  return `${topic.blocks.map(blockMarkdown).join('\n\n')}\n`;
}

/** Text made safe for roff: backslashes, hyphens, and the characters man's fonts may lack. */
export function roffText(text: string): string {
  const escaped = text
    .replace(/\\/g, '\\e')
    .replace(/-/g, '\\-')
    .replace(/→/g, '\\(->')
    .replace(/…/g, '...')
    .replace(/·/g, '\\(md')
    .replace(/`([^`]*)`/g, '\\fB$1\\fR');
  // A line that starts with a dot or an apostrophe would be read as a request.
  return escaped.replace(/^([.'])/gm, '\\&$1');
}

function blockRoff(block: HelpBlock): string {
  if ('paragraph' in block) return `.PP\n${roffText(block.paragraph)}`;
  if ('code' in block) return `.PP\n.RS 4\n.nf\n${block.code.map(roffText).join('\n')}\n.fi\n.RE`;
  const { head, rows } = block.table;
  return rows
    .map((row) => {
      const rest = head
        .slice(1)
        .map((name, column) =>
          head.length === 2
            ? roffText(row[column + 1] ?? '')
            : `${roffText(name)}: ${roffText(row[column + 1] ?? '')}`,
        );
      return `.TP\n\\fB${roffText(plain(row[0] ?? ''))}\\fR\n${rest.join('\n.br\n')}`;
    })
    .join('\n');
}

export function topicRoff(topic: HelpTopic): string {
  return `.SH ${topic.manSection}\n${topic.blocks.map(blockRoff).join('\n')}\n`;
}
