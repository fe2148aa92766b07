import type { CommandUnknownOpts as Command } from '@commander-js/extra-typings';
import { usageError } from '../errors';
import type { CommandContext } from './context';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;

interface Spec {
  name: string;
  description: string;
  options: string[];
  subcommands: string[];
}

/** The completion scripts are derived from the commander program, so they never fall behind it. */
function describe(program: Command): { globals: string[]; commands: Spec[] } {
  const longFlags = (command: Command) =>
    command.options.map((option) => option.long).filter((flag): flag is string => Boolean(flag));
  return {
    globals: [...longFlags(program), '--help'],
    commands: program.commands.map((command) => ({
      name: command.name(),
      description: command.description().split('\n')[0] ?? '',
      options: longFlags(command),
      subcommands: command.commands.map((sub) => sub.name()),
    })),
  };
}

function bash({ globals, commands }: ReturnType<typeof describe>): string {
  const cases = commands
    .map(
      (command) =>
        `    ${command.name}) words="${[...command.subcommands, ...command.options, ...globals].join(' ')}" ;;`,
    )
    .join('\n');
  return `# petinv completion for bash: eval "$(petinv completion bash)"
_petinv() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" words
  if [ "$COMP_CWORD" -eq 1 ]; then
    words="${commands.map((command) => command.name).join(' ')} ${globals.join(' ')}"
  else
    case "\${COMP_WORDS[1]}" in
${cases}
    *) words="${globals.join(' ')}" ;;
    esac
  fi
  case "$cur" in
    -*) ;;
    *) [ "$COMP_CWORD" -gt 1 ] && words="\${words//--*/}" ;;
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
  [ \${#COMPREPLY[@]} -eq 0 ] && COMPREPLY=($(compgen -f -- "$cur"))
}
complete -F _petinv petinv
`;
}

function zsh(spec: ReturnType<typeof describe>): string {
  return `# petinv completion for zsh: eval "$(petinv completion zsh)"
autoload -U +X bashcompinit && bashcompinit
${bash(spec).split('\n').slice(1).join('\n')}`;
}

function fish({ globals, commands }: ReturnType<typeof describe>): string {
  const quote = (text: string) => `'${text.replaceAll("'", "\\'")}'`;
  const lines = ['# petinv completion for fish: petinv completion fish | source', 'complete -c petinv -f'];
  for (const command of commands) {
    lines.push(
      `complete -c petinv -n __fish_use_subcommand -a ${command.name} -d ${quote(command.description)}`,
    );
    for (const sub of command.subcommands)
      lines.push(`complete -c petinv -n '__fish_seen_subcommand_from ${command.name}' -a ${sub}`);
    for (const option of command.options)
      lines.push(`complete -c petinv -n '__fish_seen_subcommand_from ${command.name}' -l ${option.slice(2)}`);
  }
  for (const option of globals) lines.push(`complete -c petinv -l ${option.slice(2)}`);
  return `${lines.join('\n')}\n`;
}

export function runCompletion(shell: string, program: Command, context: CommandContext) {
  const spec = describe(program);
  const scripts: Record<(typeof SHELLS)[number], () => string> = {
    bash: () => bash(spec),
    zsh: () => zsh(spec),
    fish: () => fish(spec),
  };
  const make = scripts[shell as (typeof SHELLS)[number]];
  if (!make) throw usageError(`completion ${shell}: choose one of ${SHELLS.join(', ')}`);
  context.stdout.write(make());
}
