import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { usageError } from '../errors';
import { topicText } from '../help/render';
import { findTopic, HELP_TOPICS } from '../help/topics';
import { printable } from '../printable';
import type { CommandContext } from './context';

/** `petinv help [NAME...]`: the program's help, a command's (`help env set-url`), or a help topic. */
export function runHelp(names: readonly string[], program: CommandUnknownOpts, context: CommandContext) {
  const topic = names.length === 1 ? findTopic(names[0] ?? '') : undefined;
  if (topic) {
    const width = context.stdout.isTTY ? (context.stdout.columns ?? 80) : 80;
    context.stdout.write(topicText(topic, width));
    return;
  }
  let command = program;
  for (const name of names) {
    const next = command.commands.find((sub) => sub.name() === name || sub.aliases().includes(name));
    if (!next) {
      const commands = command.commands.map((sub) => sub.name()).join(', ');
      const topics =
        command === program ? `; topics: ${HELP_TOPICS.map((known) => known.name).join(', ')}` : '';
      throw usageError(`no help for "${printable(names.join(' '), 60)}"; commands: ${commands}${topics}`);
    }
    command = next;
  }
  command.outputHelp();
}
