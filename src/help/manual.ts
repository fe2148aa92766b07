import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { buildProgram } from '../program';
import { COMMAND_EXAMPLES } from './examples';
import { roffText, topicMarkdown, topicRoff } from './render';
import { HELP_TOPICS } from './topics';

/**
 * The documents made from the help text: the man page (written at build, scripts/docs.mjs) and the
 * README's help-topic sections. Built from the same declarations, examples and topics as `--help`.
 */

/** The program as help sees it; no command runs, so no context is ever made. */
function declaredProgram() {
  return buildProgram(
    () => {},
    () => {
      throw new Error('the manual runs no command');
    },
  );
}

function optionsRoff(
  command: CommandUnknownOpts,
  options: ReturnType<CommandUnknownOpts['options']['slice']>,
) {
  const help = command.createHelp();
  return options
    .map(
      (option) =>
        `.TP\n\\fB${roffText(help.optionTerm(option))}\\fR\n${roffText(help.optionDescription(option))}`,
    )
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
    .map(
      (argument) =>
        `.TP\n\\fI${roffText(help.argumentTerm(argument))}\\fR\n${roffText(help.argumentDescription(argument))}`,
    );
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
      "`petinv help exit-codes`, `petinv help environment`, `petinv help formats`; README.md in petinv's package directory, the full manual.",
    ),
    '',
  ].join('\n');
}

const marker = (name: string, end = false) => `<!-- ${end ? '/' : ''}help:${name} -->`;

/**
 * The README with each help topic's section rewritten from its source. Throws when a section's markers are
 * missing, so a topic cannot silently drop out of the README.
 */
export function syncReadme(readme: string): string {
  let text = readme;
  for (const topic of HELP_TOPICS) {
    const start = text.indexOf(marker(topic.name));
    const end = text.indexOf(marker(topic.name, true));
    if (start < 0 || end < start) throw new Error(`README.md has no ${marker(topic.name)} section`);
    const generated = `${marker(topic.name)}\n<!-- generated from src/help/topics.ts by npm run docs: edit it there -->\n\n${topicMarkdown(topic)}\n`;
    text = text.slice(0, start) + generated + text.slice(end);
  }
  return text;
}
