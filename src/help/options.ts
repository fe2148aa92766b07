import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { type HelpTopic, OPTIONS_TOPIC } from './topics';

/** `petinv help options`, made from the declarations, so the terminal and docs/guide.md list the same options. */
export function optionsTopic(program: CommandUnknownOpts): HelpTopic {
  const help = program.createHelp();
  const options = program.options.filter((option) => !option.hidden && option.long !== '--version');
  return {
    ...OPTIONS_TOPIC,
    manSection: 'OPTIONS',
    blocks: [
      {
        paragraph:
          'Every command takes these, before or after its name (`petinv --env staging list`, `petinv list --env staging`). A bad value of any of them is a usage error (exit 2) before anything runs.',
      },
      {
        table: {
          head: ['option', 'meaning'],
          rows: options.map((option) => [`\`${help.optionTerm(option)}\``, help.optionDescription(option)]),
        },
      },
    ],
  };
}
