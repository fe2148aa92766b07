import type { CommandUnknownOpts, Option } from '@commander-js/extra-typings';
import { COMMAND_EXAMPLES } from '../help/examples';
import { optionsTopic } from '../help/options';
import { roffText, topicMarkdown, topicRoff } from '../help/render';
import { findTopic, HELP_TOPICS } from '../help/topics';
import { buildProgram } from './build';

/** The man page and the generated sections of the README and docs/, from what `--help` shows (scripts/docs.mjs). */

/** The program as help sees it; no command runs, so no context is ever made. */
function declaredProgram() {
  return buildProgram(
    () => {},
    () => {
      throw new Error('the manual runs no command');
    },
  );
}

/** A term (in bold, or italic) and its description, as man lists them. */
const itemRoff = (font: 'B' | 'I', term: string, description: string) =>
  `.TP\n\\f${font}${roffText(term)}\\fR\n${roffText(description)}`;

function optionsRoff(command: CommandUnknownOpts, options: readonly Option[]) {
  const help = command.createHelp();
  return options
    .map((option) => itemRoff('B', help.optionTerm(option), help.optionDescription(option)))
    .join('\n');
}

function examplesRoff(path: string): string {
  const examples = COMMAND_EXAMPLES[path] ?? [];
  if (examples.length === 0) return '';
  return `.PP\nExamples:\n.RS 4\n.nf\n${examples.map(roffText).join('\n')}\n.fi\n.RE\n`;
}

function commandRoff(command: CommandUnknownOpts, path: string[]): string {
  const help = command.createHelp();
  const name = [...path, command.name()];
  const options = help.visibleOptions(command).filter((option) => option.long !== '--help');
  const args = help
    .visibleArguments(command)
    .map((argument) => itemRoff('I', help.argumentTerm(argument), help.argumentDescription(argument)));
  const parts = [
    `.SS ${roffText(name.join(' '))}`,
    `.B ${roffText(help.commandUsage(command))}`,
    `.PP\n${roffText(help.commandDescription(command).replace(/\n/g, ' '))}`,
    ...args,
    options.length > 0 ? optionsRoff(command, options) : '',
    examplesRoff(name.join(' ')),
  ].filter((part) => part !== '');
  const subcommands = help
    .visibleCommands(command)
    .filter((sub) => sub.name() !== 'help')
    .map((sub) => commandRoff(sub, name));
  return [parts.join('\n'), ...subcommands].join('\n');
}

/** petinv(1), in roff. */
export function renderManPage(version: string): string {
  const program = declaredProgram();
  const help = program.createHelp();
  // The top-level help lists only --version and --help; the man page, every option every command takes.
  const globals = program.options.filter((option) => !option.hidden);
  const commands = help.visibleCommands(program).map((command) => commandRoff(command, []));
  return [
    `.TH PETINV 1 "" "petinv ${roffText(version)}" "User Commands"`,
    // Left-aligned, unhyphenated: option names and commands stay whole.
    '.ad l',
    '.nh',
    '.SH NAME',
    `petinv \\- ${roffText(program.description().replace(/\.$/, ''))}`,
    '.SH SYNOPSIS',
    '.B petinv',
    '[\\fIoptions\\fR] \\fIcommand\\fR [\\fIarguments\\fR]',
    '.SH DESCRIPTION',
    roffText(
      'petinv reads and changes the stock of a pet store inventory service: `petinv list` shows it, `petinv set` and `petinv adjust` change it, and `petinv serve` runs the whole service on this machine for offline work and for testing scripts. Every command takes `--help`.',
    ),
    '.SH OPTIONS',
    'These options apply to every command.',
    optionsRoff(program, globals),
    '.SH COMMANDS',
    ...commands,
    ...HELP_TOPICS.map(topicRoff),
    '.SH SEE ALSO',
    roffText(
      "`petinv help options`, `petinv help exit-codes`, `petinv help environment`, `petinv help formats`, `petinv help rows`, `petinv help input`; README.md and docs/guide.md in petinv's package directory, the full manual.",
    ),
    '',
  ].join('\n');
}

const marker = (name: string, end = false) => `<!-- ${end ? '/' : ''}help:${name} -->`;

/** The README's exit codes in short: each code once, with the words before its meaning's first colon or parenthesis. */
function shortExitCodes(): string {
  const table = findTopic('exit-codes')?.blocks.find((block) => 'table' in block);
  if (table === undefined || !('table' in table)) throw new Error('the exit-codes topic has no table');
  const seen = new Map<string, string>();
  for (const [code = '', meaning = ''] of table.table.rows)
    if (!seen.has(code)) seen.set(code, meaning.split(/: | \(/)[0] ?? meaning);
  return topicMarkdown({ blocks: [{ table: { head: ['exit code', 'meaning'], rows: [...seen] } }] });
}

/** The sections made from the help text, each with its page; a test fails when a page drifts or loses one. */
export const GENERATED_SECTIONS: readonly { page: string; name: string; render: () => string }[] = [
  { page: 'README.md', name: 'exit-codes-short', render: shortExitCodes },
  { page: 'docs/guide.md', name: 'options', render: () => topicMarkdown(optionsTopic(declaredProgram())) },
  ...HELP_TOPICS.map((topic) => ({
    page: topic.name === 'environment' ? 'docs/configuration.md' : 'docs/guide.md',
    name: topic.name,
    render: () => topicMarkdown(topic),
  })),
];

export const GENERATED_PAGES: readonly string[] = [
  ...new Set(GENERATED_SECTIONS.map((section) => section.page)),
];

/**
 * `page` (a path from the package's root, as GENERATED_SECTIONS names it) with each of its generated sections
 * rewritten from its source. Throws when a section's markers are missing, so none can silently drop out.
 */
export function syncDocument(page: string, text: string): string {
  let synced = text;
  for (const section of GENERATED_SECTIONS.filter((each) => each.page === page)) {
    const start = synced.indexOf(marker(section.name));
    const end = synced.indexOf(marker(section.name, true));
    if (start < 0 || end < start) throw new Error(`${page} has no ${marker(section.name)} section`);
    const generated = `${marker(section.name)}\n<!-- generated from src/help/ by npm run docs: edit it there -->\n\n${section.render()}\n`;
    synced = synced.slice(0, start) + generated + synced.slice(end);
  }
  return synced;
}
