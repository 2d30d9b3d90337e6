"""vaultctl completion bash|zsh|fish: print the shell's completion script."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from vaultctl.completion.scripts import INSTALL, Shell, script


def completion(
    shell: Annotated[Shell, typer.Argument(metavar="SHELL", help="bash, zsh or fish.")],
) -> None:
    """Print the completion script of a shell (commands, options, vault ids, note names).

    Install it once:

    \b
      bash: vaultctl completion bash > ~/.local/share/bash-completion/completions/vaultctl
      zsh:  vaultctl completion zsh > "${fpath[1]}/_vaultctl"   (then: compinit)
      fish: vaultctl completion fish > ~/.config/fish/completions/vaultctl.fish

    or load it in each new shell: eval "$(vaultctl completion bash)" in ~/.bashrc,
    source <(vaultctl completion zsh) in ~/.zshrc. Vault ids and note names come from the
    running daemon; a shell never starts one.
    """
    sys.stdout.write(script(shell))
    if sys.stdout.isatty():
        print(INSTALL[shell], file=sys.stderr)
