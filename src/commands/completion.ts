import { usageError } from '../errors';
import type { CommandContext } from '../output/context';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;

// Each script is a thin loop around `petinv __complete` (complete.ts), so it never falls behind the commands.

const BASH = `# petinv completion for bash; in ~/.bashrc: eval "$(petinv completion bash)"
_petinv() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" line i
  local -a lines words
  local IFS=$'\\n'
  # bash splits --env=NAME into --env, = and NAME (COMP_WORDBREAKS): petinv is asked about --env NAME,
  # and its answer replaces what follows the =, the word readline completes.
  for (( i = 1; i < COMP_CWORD; i++ )); do
    [[ "\${COMP_WORDS[i]}" == "=" && "\${COMP_WORDS[i-1]}" == -* ]] || words+=("\${COMP_WORDS[i]}")
  done
  [[ "$cur" == "=" && "\${COMP_WORDS[COMP_CWORD-1]}" == -* ]] && cur=""
  lines=($(petinv __complete "\${words[@]}" "$cur" 2>/dev/null))
  COMPREPLY=()
  if [ "\${lines[0]}" = ":files" ]; then
    compopt -o filenames 2>/dev/null
    COMPREPLY=($(compgen -f -- "$cur"))
    return 0
  fi
  for line in "\${lines[@]:1}"; do
    COMPREPLY+=("\${line%%$'\\t'*}")
  done
}
complete -F _petinv petinv
`;

const ZSH = `# petinv completion for zsh; in ~/.zshrc, before or after compinit: eval "$(petinv completion zsh)"
_petinv() {
  local -a lines described plain
  local line value description
  lines=("\${(@f)$(petinv __complete "\${(@)words[2,CURRENT-1]}" "\${words[CURRENT]}" 2>/dev/null)}")
  if [[ "\${lines[1]}" == ":files" ]]; then
    # --file=NAME: file names after the =.
    [[ "\${words[CURRENT]}" == -*=* ]] && compset -P '*='
    _files
    return
  fi
  for line in "\${(@)lines[2,-1]}"; do
    [[ -n "$line" ]] || continue
    value="\${line%%$'\\t'*}" description="\${line#*$'\\t'}"
    if [[ -n "$description" ]]; then
      described+=("\${value//:/\\\\:}:$description")
    else
      plain+=("$value")
    fi
  done
  local found=1
  (( \${#described} )) && _describe -t values petinv described && found=0
  (( \${#plain} )) && compadd -- "\${plain[@]}" && found=0
  return found
}
# compdef exists once compinit has run. A .zshrc that runs compinit later, or never, gets petinv's
# completion at its first prompt instead of an error now.
_petinv_register() {
  (( $+functions[compdef] )) || { autoload -Uz compinit && compinit }
  compdef _petinv petinv
  precmd_functions=(\${precmd_functions:#_petinv_register})
}
if (( $+functions[compdef] )); then
  compdef _petinv petinv
else
  precmd_functions+=(_petinv_register)
fi
`;

const FISH = `# petinv completion for fish; in ~/.config/fish/config.fish: petinv completion fish | source
function __petinv_complete
    set -l words (commandline -opc)
    set -l current (commandline -ct)
    set -l lines (petinv __complete $words[2..-1] "$current" 2>/dev/null)
    if test "$lines[1]" = ":files"
        # --file=NAME: file names after the =, each offered with the --file= before it.
        set -l option (string match -r -- '^-[^=]*=' "$current")
        if test -n "$option"
            __fish_complete_path (string sub -s (math (string length -- "$option") + 1) -- "$current") | string replace -r -- '^' "$option"
        else
            __fish_complete_path "$current"
        end
        return
    end
    printf '%s\\n' $lines[2..-1]
end
complete -c petinv -f -a '(__petinv_complete)'
`;

const SCRIPTS: Record<(typeof SHELLS)[number], string> = { bash: BASH, zsh: ZSH, fish: FISH };

export function runCompletion(shell: string, context: CommandContext) {
  const script = SCRIPTS[shell as (typeof SHELLS)[number]];
  if (script === undefined) throw usageError(`completion ${shell}: choose one of ${SHELLS.join(', ')}`);
  context.stdout.write(script);
}
