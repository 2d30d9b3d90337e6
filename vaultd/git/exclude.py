"""Machine files stay out of git through the repository's ``info/exclude``, never ``.gitignore``.

``.gitignore`` is the user's (and the team's, once pushed); ``info/exclude`` is local to the clone
and meant for exactly this. vaultd adds the patterns it needs in a block of its own and never
removes or rewrites a line it did not add. The file is replaced atomically, so a reader sees the
old list or the new one.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from vaultd.fsio import write_atomic

if TYPE_CHECKING:
    from pathlib import Path

    from vaultd.git.repo import Repo

BEGIN = "# vaultd: machine files, kept out of git by vaultd (local to this clone)"
END = "# end vaultd"

#: What no vault commit ever holds: the daemon's own folder, its temp files, Obsidian's per-device
#: layout files, and the trash (a deleted note lives on in history, not in a folder every clone gets).
PATTERNS = (
    ".vaultd/",
    ".vaultd-*.tmp",
    "**/.obsidian/workspace*.json",
    ".trash/",
)


def exclude_file(repo: Repo) -> Path:
    return repo.common_dir / "info" / "exclude"


def missing(repo: Repo) -> list[str]:
    """The patterns the exclude file lacks (any line equal to one counts, wherever it is)."""
    try:
        have = {ln.strip() for ln in exclude_file(repo).read_text(encoding="utf-8", errors="replace").splitlines()}
    except FileNotFoundError:
        have = set()
    return [p for p in PATTERNS if p not in have]


def ensure(repo: Repo) -> list[str]:
    """Add the missing patterns in vaultd's block; returns what was added (nothing: unchanged)."""
    lacking = missing(repo)
    if not lacking:
        return []
    path = exclude_file(repo)
    try:
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
    except FileNotFoundError:
        text = ""
    lines = text.splitlines()
    if BEGIN in lines and END in lines[lines.index(BEGIN) :]:
        at = lines.index(END, lines.index(BEGIN))
        lines[at:at] = lacking
    else:
        if lines and lines[-1].strip():
            lines.append("")
        lines += [BEGIN, *lacking, END]
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = os.stat(path).st_mode & 0o777 if path.exists() else 0o644
    write_atomic(path, ("\n".join(lines) + "\n").encode("utf-8", "surrogateescape"), mode=mode)
    return lacking
