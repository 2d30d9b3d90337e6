"""Where the daemon lives: its home, its socket, its folder in each vault. Shared so every client
finds the same socket, and the agent-host guard knows which folder is the daemon's.

The socket search order matters for agent hosts, which strip ``XDG_RUNTIME_DIR`` from an MCP
server's environment: ``/run/user/<uid>`` is used when it exists and is the user's, so the shim
launched by a host and the CLI in a terminal still meet at one socket.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

SOCKET_NAME = "vaultd.sock"
VAULT_STATE_DIR = ".vaultd"  #: the vault's state folder: the daemon's own folder inside each vault (lock, journal, proposals)


def resolve_home(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    if home := env.get("VAULTD_HOME"):
        return Path(home).absolute()
    data = env.get("XDG_DATA_HOME") or str(Path(env.get("HOME", str(Path.home()))) / ".local" / "share")
    return Path(data).absolute() / "vaultd"


def _private_dir(path: Path) -> bool:
    try:
        st = path.stat()
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) == 0o700


def resolve_socket(home: Path | None = None, environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    if sock := env.get("VAULTD_SOCKET"):
        return Path(sock).absolute()
    if runtime := env.get("XDG_RUNTIME_DIR"):
        return Path(runtime).absolute() / "vaultd" / SOCKET_NAME
    run_user = Path(f"/run/user/{os.getuid()}")
    if _private_dir(run_user):
        return run_user / "vaultd" / SOCKET_NAME
    return (home or resolve_home(env)) / "run" / SOCKET_NAME


def socket_dir_problem(folder: Path, uid: int) -> str | None:
    """Why ``folder`` is no safe place for user ``uid``'s socket, or None when it is one.

    One rule for the daemon (before it binds) and its clients (before they connect). It checks
    an existing folder and never changes it: the daemon makes a private 0700 folder only when it
    creates the folder itself.

    - It must be a folder itself, not a symbolic link to one.
    - It must belong to ``uid`` or to root (uid 0), who can replace anything anyway.
    - No other user may write in it, unless it has the sticky bit (as ``/tmp`` has): there only a
      file's owner may remove or rename a file, so nobody can swap the socket for their own. They
      can still bind the name first, so in such a folder the socket file itself must pass
      :func:`socket_file_problem` (the user's, mode 0600 or stricter).
    """
    try:
        st = folder.lstat()
    except FileNotFoundError:
        return f"the socket folder {folder} does not exist"
    except OSError as exc:
        return f"cannot inspect the socket folder {folder}: {exc.strerror}"
    if stat.S_ISLNK(st.st_mode):
        return f"the socket folder {folder} is a symbolic link; point VAULTD_SOCKET at a real folder"
    if not stat.S_ISDIR(st.st_mode):
        return f"the socket folder {folder} is not a folder"
    if st.st_uid not in (uid, 0):
        return (
            f"the socket folder {folder} belongs to uid {st.st_uid}, not to this user (uid {uid}); "
            f"set VAULTD_SOCKET to a path in a folder of your own"
        )
    mode = stat.S_IMODE(st.st_mode)
    if mode & (stat.S_IWGRP | stat.S_IWOTH) and not mode & stat.S_ISVTX:
        return (
            f"the socket folder {folder} (mode {mode:04o}) is writable by other users, who could replace "
            f"the socket; remove its group/other write bits, or set VAULTD_SOCKET to a path in a private folder"
        )
    return None


def socket_file_problem(path: Path, uid: int) -> str | None:
    """Why the socket file at ``path`` is not the user's own, or None (also when there is none yet).

    It must be a socket (not a symlink to one), belong to ``uid``, and give no access to group or
    others (0600), as the daemon creates it.
    """
    try:
        st = path.lstat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot inspect {path}: {exc.strerror}"
    if not stat.S_ISSOCK(st.st_mode):
        return f"{path} exists and is not a socket; move it away"
    if st.st_uid != uid:
        return f"the socket {path} belongs to uid {st.st_uid}, not to this user (uid {uid}); refusing to use it"
    if stat.S_IMODE(st.st_mode) & 0o077:
        return f"the socket {path} (mode {stat.S_IMODE(st.st_mode):04o}) is open to other users; expected 0600"
    return None
