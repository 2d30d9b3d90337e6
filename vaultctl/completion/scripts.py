"""The completion scripts for bash, zsh and fish, and how to install each.

Every script does the same: it hands ``vaultctl __complete SHELL LINE`` the command line up to
the cursor and reads back a first line naming what was found (``plain``, ``file`` or ``dir``)
followed by one candidate per line, ``value<TAB>help``. For ``file`` and ``dir`` the shell
completes paths itself; otherwise it offers the candidates, quoting them as it quotes file names
(so ``Alpha Plan`` becomes ``Alpha\\ Plan``).
"""

from __future__ import annotations

import enum


class Shell(enum.StrEnum):
    BASH = "bash"
    ZSH = "zsh"
    FISH = "fish"


_BASH = r"""# vaultctl completion for bash; see 'vaultctl completion --help' to install it.
_vaultctl_complete() {
    local IFS=$'\n' kind
    local -a reply
    reply=($(vaultctl __complete bash "${COMP_LINE:0:COMP_POINT}" 2>/dev/null))
    kind=${reply[0]}
    case $kind in
        file) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "${COMP_WORDS[COMP_CWORD]}")) ;;
        dir) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- "${COMP_WORDS[COMP_CWORD]}")) ;;
        plain)
            compopt -o filenames 2>/dev/null
            COMPREPLY=("${reply[@]:1}")
            COMPREPLY=("${COMPREPLY[@]%%$'\t'*}")
            if [[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == */ ]]; then compopt -o nospace 2>/dev/null; fi
            ;;
        *) COMPREPLY=() ;;
    esac
    return 0
}
complete -F _vaultctl_complete vaultctl
"""

_ZSH = r"""#compdef vaultctl
# vaultctl completion for zsh; see 'vaultctl completion --help' to install it.
_vaultctl() {
    local -a reply described
    local kind line
    line="${(j: :)${(@)words[1,CURRENT]}}"
    reply=("${(@f)$(vaultctl __complete zsh "$line" 2>/dev/null)}")
    kind=${reply[1]}
    case $kind in
        file) _files ;;
        dir) _files -/ ;;
        plain)
            local entry value
            local -a folders
            for entry in "${(@)reply[2,-1]}"; do
                [[ -z $entry ]] && continue
                value=${entry%%$'\t'*}
                if [[ $value == */ ]]; then
                    folders+=("$value")  # a folder: no space after it, its notes come next
                else
                    described+=("${value//:/\\:}:${entry#*$'\t'}")
                fi
            done
            # -U: vaultctl matched them already (note names case-insensitively); zsh must not filter again
            (( ${#folders} )) && compadd -U -S '' -- "${folders[@]}"
            (( ${#described} )) && _describe -t values vaultctl described -U
            ;;
    esac
}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
    _vaultctl "$@"
else
    compdef _vaultctl vaultctl
fi
"""

_FISH = r"""# vaultctl completion for fish; see 'vaultctl completion --help' to install it.
function __vaultctl_complete
    set -l reply (vaultctl __complete fish (commandline -cp) 2>/dev/null)
    switch "$reply[1]"
        case file
            __fish_complete_path (commandline -ct)
        case dir
            __fish_complete_directories (commandline -ct)
        case plain
            printf '%s\n' $reply[2..-1]
    end
end
complete -c vaultctl -f -a '(__vaultctl_complete)'
"""

_SCRIPTS = {Shell.BASH: _BASH, Shell.ZSH: _ZSH, Shell.FISH: _FISH}

INSTALL = {
    Shell.BASH: (
        "# install: vaultctl completion bash > ~/.local/share/bash-completion/completions/vaultctl\n"
        '#      or: add  eval "$(vaultctl completion bash)"  to ~/.bashrc'
    ),
    Shell.ZSH: (
        '# install: vaultctl completion zsh > "${fpath[1]}/_vaultctl"  (then run compinit)\n'
        "#      or: add  source <(vaultctl completion zsh)  to ~/.zshrc, after compinit"
    ),
    Shell.FISH: "# install: vaultctl completion fish > ~/.config/fish/completions/vaultctl.fish",
}


def script(shell: Shell) -> str:
    """The script that teaches ``shell`` to complete vaultctl's command lines."""
    return _SCRIPTS[shell]
