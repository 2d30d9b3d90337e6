"""Shell completion: ``vaultctl completion bash|zsh|fish`` prints a script; the script asks
``vaultctl __complete`` what may follow the words typed so far.

A command marks what its argument or option holds by adding a :class:`Complete` member to the
parameter's ``Annotated`` metadata (typer ignores it); enum-typed parameters complete their
values without a mark. This module is imported by every command module, so it holds only that.
"""

from __future__ import annotations

import enum


class Complete(enum.Enum):
    """What a parameter's value is, for completion."""

    NOTE = "note"  #: a note, by name or path (asks the daemon: note.names)
    VAULT = "vault"  #: a registered vault id (vault.list)
    OP = "op"  #: a kept operation id (op.list)
    PROPOSAL = "proposal"  #: a pending proposal id (proposal.list)
    COMMAND = "command"  #: a vaultctl command's words (for ``vaultctl help``)
    FILE = "file"  #: a file on disk: the shell completes it
    DIR = "dir"  #: a folder on disk: the shell completes it
