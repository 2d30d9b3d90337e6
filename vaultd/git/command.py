"""Running the real ``git`` binary: hardened, bounded, never interactive.

Every git command vaultd runs goes through :func:`run`. It is what users have and trust, and the
one implementation of their repository's formats and locks; its config is not trusted. The
environment is scrubbed of every ``GIT_*`` variable that could point git at another repository,
index or object store, and each call gets the configuration :mod:`vaultd.git.trust` decides: no
system or global config file, every key that could run code, prompt, redirect a transfer or
weaken git's checks of what is fetched set to a harmless value, every filter, diff and merge
driver the repository's config defines neutralised, no transport allowed but the one a call names
(:func:`run`'s ``allow``). Pathspecs are literal (a note may be called ``[draft]*.md``), paths are
never quoted (``core.quotePath=false``) and read with ``-z`` where git offers it, and messages are
in the C locale so they can be matched.

What git prints is read in chunks up to a bound the caller gives (``limit``); a command that
prints more is stopped, and nothing past the bound is ever held in memory. Its messages are kept
up to :data:`MAX_STDERR_BYTES`.

Calls block: callers run them in a worker thread, never on the event loop.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
from dataclasses import dataclass
from functools import cache
from typing import IO, TYPE_CHECKING

from vaultd.errors import Internal, LimitExceeded, Unavailable
from vaultd.git import trust

if TYPE_CHECKING:
    from pathlib import Path

#: The oldest git vaultd runs (trailer formats, fast-forward checks, get-url --push, and
#: GIT_CONFIG_COUNT, which carries the config vaultd gives every call).
MIN_VERSION = (2, 31)
LOCAL_TIMEOUT_S = 120.0  #: a local command (hash, commit, log) that takes longer is a hung repository
NETWORK_TIMEOUT_S = 300.0  #: fetch and push
MAX_OUTPUT_BYTES = 64 * 1024 * 1024  #: what one command may print, unless its caller gives another bound
MAX_STDERR_BYTES = 64 * 1024  #: git's messages kept from one command
_CHUNK = 256 * 1024

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
        raise Unavailable(
            f"git is not installed (or not on PATH); vaultd needs git {MIN_VERSION[0]}.{MIN_VERSION[1]} or later for git-backed vaults"
        )
    try:
        out = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise Unavailable(f"{found} does not run: {exc}") from exc
    m = re.search(r"(\d+)\.(\d+)", out)
    version = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
    if version < MIN_VERSION:
        raise Unavailable(f"{found} is {out.strip()}; vaultd needs git {MIN_VERSION[0]}.{MIN_VERSION[1]} or later")
    return found


def _base_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in _KEEP_ENV}
    env.update(
        {
            "LC_ALL": "C",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_LITERAL_PATHSPECS": "1",
            "GIT_PAGER": "cat",
            "GIT_EDITOR": "false",
            "GIT_ASKPASS": "",
            "GIT_SSH_COMMAND": os.environ.get("GIT_SSH_COMMAND", "ssh -o BatchMode=yes"),
            "GIT_PROXY_COMMAND": os.environ.get("GIT_PROXY_COMMAND", ""),
        }
    )
    if extra:
        env.update(extra)
    return env


def clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """An environment with nothing that redirects git, makes it wait for a person, or lets it read
    a config or attributes file vaultd did not choose."""
    return _base_env({"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_ATTR_NOSYSTEM": "1", **(extra or {})})


def _spawn(argv: list[str], env: dict[str, str], *, input: bytes | None, timeout: float, limit: int) -> tuple[int, bytes, bytes, str]:
    """Run ``argv``; (status, stdout, stderr, why it was stopped: '', 'timeout' or 'limit').

    stdout is read in chunks and the process killed once it passes ``limit``; stderr is drained
    beside it and its first :data:`MAX_STDERR_BYTES` kept; ``input`` is fed from a thread, so a
    command that prints while it reads never deadlocks.
    """
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    stopped: list[str] = []

    def stop(why: str) -> None:
        if not stopped:
            stopped.append(why)
        proc.kill()

    err = bytearray()

    def drain(stream: IO[bytes]) -> None:
        while chunk := stream.read(_CHUNK):
            if len(err) < MAX_STDERR_BYTES:
                err.extend(chunk[: MAX_STDERR_BYTES - len(err)])

    def feed(stream: IO[bytes], data: bytes) -> None:
        try:
            for i in range(0, len(data), _CHUNK):
                stream.write(data[i : i + _CHUNK])
            stream.close()
        except (BrokenPipeError, ValueError, OSError):
            pass  # git stopped reading (it failed, or was stopped): its status says why

    assert proc.stdout is not None and proc.stderr is not None
    helpers = [threading.Thread(target=drain, args=(proc.stderr,), daemon=True)]
    if input is not None:
        assert proc.stdin is not None
        helpers.append(threading.Thread(target=feed, args=(proc.stdin, input), daemon=True))
    timer = threading.Timer(timeout, stop, args=("timeout",))
    timer.daemon = True
    for t in helpers:
        t.start()
    timer.start()
    chunks: list[bytes] = []
    size = 0
    try:
        while chunk := proc.stdout.read1(_CHUNK):  # type: ignore[attr-defined]
            size += len(chunk)
            if size > limit:
                stop("limit")
                break
            chunks.append(chunk)
    finally:
        proc.stdout.close()
        status = proc.wait()
        timer.cancel()
        for t in helpers:
            t.join()
        proc.stderr.close()
    return status, b"".join(chunks), bytes(err), stopped[0] if stopped else ""


_VIEWS = trust.Cache()

#: A remote's uploadpack and receivepack keep the first value git reads (the repository's own,
#: if it names one), so the programs a transfer runs are given on its command line, which wins.
#: A fetch maps only the refs its command line names (``--refmap=``): a ``remote.origin.fetch``
#: of the repository's could otherwise move any local branch to what origin sent.
_TRANSFER_OPTIONS: dict[str, tuple[str, ...]] = {
    "fetch": ("--upload-pack=git-upload-pack", "--refmap="),
    "ls-remote": ("--upload-pack=git-upload-pack",),
    "push": ("--receive-pack=git-receive-pack",),
}
#: What vaultd never runs: each reaches a remote or a submodule in ways the calls above do not bound.
_NEVER = frozenset({"clone", "pull", "remote-ext", "submodule", "archive", "bundle", "daemon", "http-backend", "upload-pack"})


def _locate(cwd: Path) -> tuple[str | None, list[str]]:
    status, out, _, _ = _spawn(
        [git_binary(), "-C", str(cwd), "rev-parse", "--show-toplevel", "--absolute-git-dir", "--git-common-dir"],
        clean_env(trust.env_of(trust.FIXED)),
        input=None,
        timeout=LOCAL_TIMEOUT_S,
        limit=64 * 1024,
    )
    lines = out.decode("utf-8", "surrogateescape").splitlines()
    if status != 0 or len(lines) < 3:
        return None, []
    common = lines[2] if os.path.isabs(lines[2]) else os.path.join(str(cwd), lines[2])
    return lines[0], [lines[1], os.path.normpath(common)]


def _listing(cwd: Path) -> list[trust.Entry]:
    """The config git reads in ``cwd``, with each key's scope and file: reading config runs nothing.

    Raises:
        LimitExceeded: LIMIT, the config listing is over ``MAX_CONFIG_BYTES``.
        Unavailable: UNAVAILABLE, reading it did not finish in time.
    """
    argv = [git_binary(), "-C", str(cwd), "config", "--list", "--show-scope", "--show-origin", "--includes", "-z"]
    status, out, _, why = _spawn(argv, _base_env(), input=None, timeout=LOCAL_TIMEOUT_S, limit=trust.MAX_CONFIG_BYTES)
    if why == "limit":
        raise LimitExceeded(f"the git config read in {cwd} is over {trust.MAX_CONFIG_BYTES} bytes; vaultd does not run git there")
    if why == "timeout":
        raise Unavailable(f"reading the git config in {cwd} did not finish in {LOCAL_TIMEOUT_S:.0f} s (an include of a pipe?)")
    if status != 0:
        return []  # no folder, or a config git cannot parse: then the call itself fails before running anything
    return trust.parse(out)


def view(cwd: Path) -> trust.View:
    """What vaultd gives git in ``cwd`` (cached while the config files are unchanged)."""
    return _VIEWS.get(str(cwd), lambda: _locate(cwd), lambda: _listing(cwd))


def run(
    cwd: Path,
    *args: str,
    input: bytes | None = None,
    env: dict[str, str] | None = None,
    ok: tuple[int, ...] = (0,),
    timeout: float = LOCAL_TIMEOUT_S,
    limit: int = MAX_OUTPUT_BYTES,
    allow: str | None = None,
    outside: bool = False,
) -> Output:
    """Run ``git -C cwd args`` with vaultd's configuration; an exit status outside ``ok`` raises
    :class:`GitFailed`.

    ``allow`` names the one transport (``file``, ``ssh``, ``https``...) the call may use; every
    other is refused by git. ``outside`` runs git as in no repository (``merge-file`` on files in
    a scratch folder): nothing of the repository around ``cwd`` is read.

    Raises:
        GitFailed: INTERNAL, with git's (redacted) message.
        LimitExceeded: LIMIT, git printed more than ``limit`` bytes (it was stopped there).
        Unavailable: UNAVAILABLE, git is missing or timed out.
        PolicyRefused: POLICY, the repository's config is beyond what vaultd neutralises.
        Internal: INTERNAL, vaultd asked for a git command it never runs, or a transfer without its
            transport.
    """
    pairs = list(trust.FIXED) if outside else list(view(cwd).overrides)
    if allow is not None:
        pairs.append((f"protocol.{allow}.allow", "always"))
    full = clean_env(env)
    full.update(trust.env_of(pairs))
    if outside:
        full["GIT_CEILING_DIRECTORIES"] = os.path.dirname(os.path.realpath(cwd))
    if args[0] in _NEVER:
        raise Internal(f"vaultd never runs git {args[0]}")
    if args[0] in _TRANSFER_OPTIONS and allow is None:
        raise Internal(f"git {args[0]} needs the transport it may use")
    extra = _TRANSFER_OPTIONS.get(args[0], ())
    argv = [git_binary(), "-C", str(cwd), args[0], *extra, *args[1:]]
    try:
        status, stdout, raw_err, why = _spawn(argv, full, input=input, timeout=timeout, limit=limit)
    except OSError as exc:
        raise Unavailable(f"git could not be started: {exc.strerror or exc}") from exc
    if why == "timeout":
        raise Unavailable(f"git {args[0]} did not finish in {timeout:.0f} s; nothing more was done")
    if why == "limit":
        raise LimitExceeded(f"git {args[0]} printed more than {limit} bytes; vaultd stopped reading it")
    stderr = raw_err.decode("utf-8", "replace")
    if status not in ok:
        raise GitFailed(f"git {args[0]} failed: {redact(stderr) or f'exit {status}'}", status=status, stderr=redact(stderr))
    return Output(status, stdout, stderr)


def line(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """The first line of a command's output, stripped."""
    return run(cwd, *args, env=env).text.strip().split("\n", 1)[0]
