"""Long text for a person goes through a pager, as ``git`` does it: only on a terminal, only when
it is longer than the screen, with ``$VAULTD_PAGER``, else ``$PAGER``, else ``less``.

``less`` gets ``LESS=FRX`` unless the user set ``LESS`` (quit when it fits, keep colours, leave
the text on the screen). A pager that cannot start, or ``PAGER=cat``, prints the text directly.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys

from vaultctl import display

PAGER_ENV = "VAULTD_PAGER"


def pager_command(environ: dict[str, str] | None = None) -> list[str] | None:
    """The pager to run, or None for none (unset to ``cat``, empty, or not installed)."""
    env = os.environ if environ is None else environ
    raw = env.get(PAGER_ENV, env.get("PAGER", "less")).strip()
    try:
        argv = shlex.split(raw)
    except ValueError:
        return None
    if not argv or argv[0] == "cat" or shutil.which(argv[0]) is None:
        return None
    return argv


def show(text: str, *, enabled: bool = True) -> None:
    """Print ``text`` (already escaped) to stdout, through the pager when it is longer than the
    terminal. The text ends with a newline either way."""
    lines = display.height(sys.stdout) if enabled else None
    argv = pager_command() if lines is not None and text.count("\n") + 1 >= lines else None
    if argv is None:
        print(text)
        return
    sys.stdout.flush()
    env = dict(os.environ)
    env.setdefault("LESS", "FRX")
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, env=env)
    except OSError:
        print(text)
        return
    assert proc.stdin is not None
    try:
        proc.stdin.write((text + "\n").encode("utf-8", "surrogateescape"))
        proc.stdin.close()
    except BrokenPipeError:
        pass  # the reader quit the pager early: nothing more to show
    proc.wait()
