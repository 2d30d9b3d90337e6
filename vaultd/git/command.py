"""Running the real ``git`` binary: hardened, bounded, never interactive.

Every git command vaultd runs goes through :func:`run`. It is what users have and trust, and the
one implementation of their repository's formats, locks and config. The environment is scrubbed
of every ``GIT_*`` variable that could point git at another repository, index or object store, and
each call turns off what could run code or wait for a person: hooks, the fsmonitor, pagers,
external diff and merge drivers, terminal and askpass prompts. Pathspecs are literal (a note may
be called ``[draft]*.md``), paths are never quoted (``core.quotePath=false``) and read with ``-z``
where git offers it, and messages are in the C locale so they can be matched.

Calls block: callers run them in a worker thread, never on the event loop.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from vaultd.errors import Internal, Unavailable

if TYPE_CHECKING:
    from pathlib import Path

MIN_VERSION = (2, 30)  #: the oldest git vaultd runs (trailer formats, fast-forward checks, get-url --push)
LOCAL_TIMEOUT_S = 120.0  #: a local command (hash, commit, log) that takes longer is a hung repository
NETWORK_TIMEOUT_S = 300.0  #: fetch and push
MAX_OUTPUT_BYTES = 256 * 1024 * 1024  #: what one command may print before vaultd stops reading it

#: Config given on every call: nothing the repository's config or hooks say may run code here.
HARDENING = (
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.quotePath=false",
    "-c",
    "core.pager=cat",
    "-c",
    "diff.external=",
    "-c",
    "gc.auto=0",
    # The loose objects vaultd writes (a commit's trees and blobs) are compressed lightly: a large
    # folder's tree is rewritten on every commit, and git gc repacks them at the repository's level.
    "-c",
    "core.looseCompression=1",
    "-c",
    "maintenance.auto=false",
    "-c",
    "protocol.ext.allow=never",
)

_KEEP_ENV = ("PATH", "HOME", "USER", "LOGNAME", "TMPDIR", "SSH_AUTH_SOCK", "XDG_CONFIG_HOME", "GNUPGHOME")
_CREDENTIAL = re.compile(r"(?<=://)[^/@\s]+@")


class GitFailed(Internal):
    """A git command exited non-zero; ``stderr`` is kept (redacted) for the message."""

    def __init__(self, message: str, *, status: int, stderr: str) -> None:
        super().__init__(message)
        self.status = status
        self.stderr = stderr


@dataclass(frozen=True, slots=True)
class Output:
    status: int
    stdout: bytes
    stderr: str

    @property
    def text(self) -> str:
        return self.stdout.decode("utf-8", "replace")


def redact(text: str) -> str:
    """Git's own words, with any credentials in a URL removed, bounded for a message."""
    return _CREDENTIAL.sub("***@", text.strip())[:500]


@cache
def git_binary() -> str:
    """The git vaultd runs: ``$VAULTD_GIT`` when set, else the first on PATH; checked once.

    Raises:
        Unavailable: UNAVAILABLE, no git, or one older than :data:`MIN_VERSION`.
    """
    found = os.environ.get("VAULTD_GIT") or shutil.which("git")
    if not found:
        raise Unavailable("git is not installed (or not on PATH); vaultd needs git 2.30 or later for git-backed vaults")
    try:
        out = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise Unavailable(f"{found} does not run: {exc}") from exc
    m = re.search(r"(\d+)\.(\d+)", out)
    version = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
    if version < MIN_VERSION:
        raise Unavailable(f"{found} is {out.strip()}; vaultd needs git {MIN_VERSION[0]}.{MIN_VERSION[1]} or later")
    return found


def clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """An environment with nothing that redirects git or makes it wait for a person."""
    env = {k: v for k, v in os.environ.items() if k in _KEEP_ENV}
    env.update(
        {
            "LC_ALL": "C",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_LITERAL_PATHSPECS": "1",
            "GIT_PAGER": "cat",
            "GIT_EDITOR": "false",
            "GIT_SSH_COMMAND": os.environ.get("GIT_SSH_COMMAND", "ssh -o BatchMode=yes"),
        }
    )
    if extra:
        env.update(extra)
    return env


def run(
    cwd: Path,
    *args: str,
    input: bytes | None = None,
    env: dict[str, str] | None = None,
    ok: tuple[int, ...] = (0,),
    timeout: float = LOCAL_TIMEOUT_S,
) -> Output:
    """Run ``git -C cwd <hardening> args``; an exit status outside ``ok`` raises :class:`GitFailed`.

    Raises:
        GitFailed: INTERNAL, with git's (redacted) message.
        Unavailable: UNAVAILABLE, git is missing or timed out.
    """
    argv = [git_binary(), "-C", str(cwd), *HARDENING, *args]
    try:
        proc = subprocess.run(
            argv,
            input=input,
            capture_output=True,
            env=clean_env(env),
            timeout=timeout,
            stdin=None if input is not None else subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as exc:
        raise Unavailable(f"git {args[0]} did not finish in {timeout:.0f} s; nothing more was done") from exc
    except OSError as exc:
        raise Unavailable(f"git could not be started: {exc.strerror or exc}") from exc
    stderr = proc.stderr.decode("utf-8", "replace")
    if proc.returncode not in ok:
        raise GitFailed(
            f"git {args[0]} failed: {redact(stderr) or f'exit {proc.returncode}'}", status=proc.returncode, stderr=redact(stderr)
        )
    if len(proc.stdout) > MAX_OUTPUT_BYTES:
        raise Internal(f"git {args[0]} printed more than {MAX_OUTPUT_BYTES} bytes")
    return Output(proc.returncode, proc.stdout, stderr)


def line(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """The first line of a command's output, stripped."""
    return run(cwd, *args, env=env).text.strip().split("\n", 1)[0]
