import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { topicText } from '../help/render';
import { findTopic, HELP_TOPICS } from '../help/topics';
import type { CommandContext } from '../output/context';
import { unknownCommand } from './typos';

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
      const topics = command === program ? HELP_TOPICS.map((known) => known.name) : [];
      unknownCommand(command, name, topics);
    }
    command = next;
  }
  command.outputHelp();
}
