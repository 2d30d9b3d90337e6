"""The permission bits of what the daemon creates inside a vault: the user's, not the daemon's.

The daemon runs with umask 077 so its own state (``$VAULTD_HOME``, ``.vaultd/``, journals,
indexes, logs) is private. Vault content is the user's: a vault may be shared with a group or
served by a web server, so a new note or folder gets the umask the user started vaultd with,
applied explicitly (``fchmod``) because the process umask stays 077. An existing file keeps its
own mode when it is rewritten, moved or trashed; that is the engine's business, not this one's.
"""

from __future__ import annotations

import os


def _current_umask() -> int:
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


_user_umask: int = _current_umask()  #: replaced by :func:`record_user_umask` when the daemon starts


def record_user_umask(mask: int) -> None:
    """Remember the umask vaultd was started with (``main`` calls it before setting 077)."""
    global _user_umask
    _user_umask = mask & 0o777


def user_umask() -> int:
    return _user_umask


def new_file_mode() -> int:
    return 0o666 & ~_user_umask


def new_folder_mode() -> int:
    return 0o777 & ~_user_umask
