import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { optionsTopic } from '../help/options';
import { topicText } from '../help/render';
import { findTopic, HELP_TOPIC_NAMES, OPTIONS_TOPIC } from '../help/topics';
import type { CommandContext } from '../output/context';
import { printable } from '../printable';
import { commandAt } from './typos';

/** `petinv help [NAME...]`: the program's help, a command's (`help env set-url`), or a help topic. */
export function runHelp(names: readonly string[], program: CommandUnknownOpts, context: CommandContext) {
  const name = names.length === 1 ? names[0] : undefined;
  const topic = name === OPTIONS_TOPIC.name ? optionsTopic(program) : findTopic(name ?? '');
  if (topic) {
    context.stdout.write(topicText(topic, context.stdout.isTTY ? (context.stdout.columns ?? 80) : 80));
    return;
  }
  const [first, extra] = names;
  if (extra !== undefined && first !== undefined && (first === OPTIONS_TOPIC.name || findTopic(first)))
    program.error(
      `error: '${first}' is a help topic, with no '${printable(extra, 60)}' under it: petinv help ${first}`,
      { code: 'commander.unknownCommand' },
    );
  const topics = HELP_TOPIC_NAMES.map(([known]) => known);
  commandAt(program, names, topics).outputHelp();
}
