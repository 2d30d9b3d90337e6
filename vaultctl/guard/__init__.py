"""The agent-host guard: hosts run ``vaultctl guard`` before their own edit and shell tools.

:mod:`~vaultctl.guard.payload` reads what a host's hook payload would write,
:mod:`~vaultctl.guard.shell` what a shell line would, and :mod:`~vaultctl.guard.hook` asks the
daemon and answers the host. Nothing here imports typer: a hook runs before every matching tool
call, so it starts in the time Python itself takes.
"""

from vaultctl.guard.hook import run

__all__ = ["run"]
