"""Where the daemon lives: its home and its socket. Shared so every client finds the same socket.

The socket search order matters for agent hosts, which strip ``XDG_RUNTIME_DIR`` from an MCP
server's environment: ``/run/user/<uid>`` is used when it exists and is the user's, so the shim
launched by a host and the CLI in a terminal still meet at one socket.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path

SOCKET_NAME = "vaultd.sock"


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
