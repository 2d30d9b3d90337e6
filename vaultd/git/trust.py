"""What of a repository's own git config git may act on when vaultd runs it.

A vault folder is untrusted input: it may arrive whole (an unzip, a synced folder, a colleague's
clone) with a ``.git/config`` that names commands (``remote.origin.uploadpack``, a
``filter.<name>.clean`` that ``.gitattributes`` applies, ``core.sshCommand``, ``credential.helper``,
``diff.<name>.textconv``, ...), and git runs what its config names. So vaultd decides the whole
configuration of every git call (:func:`hardening`):

- the system and the person's global config files are not read (``GIT_CONFIG_NOSYSTEM``,
  ``GIT_CONFIG_GLOBAL=/dev/null``), nor any attributes file but the repository's own
  (``GIT_ATTR_NOSYSTEM``, ``core.attributesFile=/dev/null``). From those trusted files only what a
  commit and an authenticated fetch need is carried over: the identity, credential helpers,
  ``http.*`` and ``safe.directory``;
- every key with a fixed name that runs a command, redirects a transfer or weakens git's own
  checks is set to a harmless value (:data:`FIXED`);
- keys with open names are found by reading the repository's config (includes followed, as git
  would) and each one neutralised: every ``filter.<name>`` driver gets an empty clean, smudge and
  process command (git then stores and reads bytes as they are), every ``diff.<name>`` an identity
  textconv and no command, every ``merge.<name>`` a driver that only fails, every
  ``remote.<name>`` the standard upload and receive programs and no remote helper, every
  ``protocol.<name>.allow`` never. Attributes may name any driver; a driver git knows only from
  config, so one neutralised in config never runs, whichever attributes file names it.

The overrides travel as ``GIT_CONFIG_COUNT``/``GIT_CONFIG_KEY_n``/``GIT_CONFIG_VALUE_n``, which git
reads after every config file (so they win) and which, unlike ``-c``, keep a subsection holding
``=`` intact. (``--attr-source`` and ``GIT_ATTR_SOURCE``, which would replace the attributes files,
came with git 2.40; ``core.attributesFile`` is read before, and so loses to, the repository's own
``.gitattributes`` and ``info/attributes``: neutralising the drivers is what works on every git
vaultd runs.) What was read is cached per folder and read again when any file it came from (or an
include target, or the folder holding either) changes.

The same reading tells ``vaultctl doctor`` and ``vault.add`` which keys of the repository's own
config name a command (:func:`command_keys`): vaultd neutralises them, the person's own git does not.
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from vaultd.errors import PolicyRefused

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

MAX_CONFIG_BYTES = 4 * 1024 * 1024  #: what ``git config --list`` may print for one folder
MAX_KEPT = 1024  #: folders whose views are kept
MAX_NAMED = 256  #: open-named driver subsections vaultd neutralises in one repository
PROTOCOLS = ("file", "git", "ssh", "http", "https", "ext")  #: transports git knows; only the registered one is allowed

#: Fixed-name keys, set on every call: nothing the repository's config says may run code, prompt,
#: redirect a transfer or weaken the checks of what is fetched. Order matters for list-valued keys:
#: ``credential.helper=`` empties the helper list before the trusted helpers are added back.
FIXED: tuple[tuple[str, str], ...] = (
    ("core.hooksPath", "/dev/null"),
    ("core.fsmonitor", "false"),
    ("core.quotePath", "false"),
    ("core.pager", "cat"),
    ("core.editor", "false"),
    ("sequence.editor", "false"),
    ("core.askPass", ""),
    ("core.sshCommand", "ssh -o BatchMode=yes"),
    ("core.alternateRefsCommand", "true"),
    ("core.attributesFile", "/dev/null"),
    ("core.protectNTFS", "true"),
    ("core.protectHFS", "true"),
    ("core.untrackedCache", "false"),
    ("diff.external", ""),
    ("credential.helper", ""),
    ("gpg.program", "false"),
    ("gpg.openpgp.program", "false"),
    ("gpg.x509.program", "false"),
    ("gpg.ssh.program", "false"),
    ("gpg.ssh.defaultKeyCommand", "false"),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("push.gpgSign", "false"),
    ("log.showSignature", "false"),
    ("color.ui", "false"),
    ("i18n.logOutputEncoding", "UTF-8"),
    ("submodule.recurse", "false"),
    ("fetch.recurseSubmodules", "false"),
    ("push.recurseSubmodules", "no"),
    ("fetch.fsckObjects", "true"),
    ("transfer.fsckObjects", "true"),
    *((f"fetch.fsck.{m}", "error") for m in ("hasDotgit", "hasDot", "hasDotdot", "fullPathname", "emptyName", "nulInCommit")),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    # The loose objects vaultd writes (a commit's trees and blobs) are compressed lightly: a large
    # folder's tree is rewritten on every commit, and git gc repacks them at the repository's level.
    ("core.looseCompression", "1"),
    ("protocol.allow", "never"),
    *((f"protocol.{p}.allow", "never") for p in PROTOCOLS),
    ("http.sslVerify", "true"),
    ("http.proxy", ""),
)

#: Per open-named section, the keys given to every subsection the repository's config names.
NAMED: dict[str, tuple[tuple[str, str], ...]] = {
    "filter": (("clean", ""), ("smudge", ""), ("process", ""), ("required", "false")),
    "diff": (("textconv", "cat"), ("command", "")),
    "merge": (("driver", "false"),),
    "pager": (),  # pager.<command> is a plain key: set to false below
    "protocol": (("allow", "never"),),
}

#: Keys of the trusted (system and global) config carried over to vaultd's calls.
_CARRIED = re.compile(r"^(user\.(name|email)|credential\..*|http\..*|safe\.directory)$")

#: Keys of a repository's config that run a command or send its data elsewhere, as doctor reports
#: them (section, then key, for keys with an open subsection in between).
_COMMAND_KEYS = re.compile(
    r"^(core\.(sshcommand|fsmonitor|hookspath|pager|editor|askpass|gitproxy|alternaterefscommand|worktree)"
    r"|sequence\.editor|diff\.external|credential\.(.+\.)?helper|gpg\.(.+\.)?program|gpg\.ssh\.defaultkeycommand"
    r"|filter\..+\.(clean|smudge|process)|diff\..+\.(textconv|command)|merge\..+\.driver"
    r"|remote\..+\.(uploadpack|receivepack|vcs|proxy)|url\..+\.(insteadof|pushinsteadof)"
    r"|include\.path|includeif\..+\.path|protocol\.(.+\.)?allow|pager\..+|alias\..+"
    r"|(difftool|mergetool|man|browser)\..+\.(cmd|path)|web\.browser|interactive\.difffilter"
    r"|submodule\..+\.update|uploadpack\.packobjectshook|(fetch\.|receive\.)?fsck\..+|transfer\.fsckobjects)$"
)
_HARMLESS = {
    "core.fsmonitor": ("false", "0", "no", "off"),
    "core.hookspath": ("/dev/null",),
    "transfer.fsckobjects": ("true", "1", "yes", "on"),
}

Stamp = tuple[int, int, int, int] | None


@dataclass(frozen=True, slots=True)
class Entry:
    scope: str  #: system, global, local, worktree, command
    origin: str  #: the file it came from, as git names it
    key: str  #: section and key lowercased, subsection as written
    value: str | None  #: None for a key given without '='


@dataclass(frozen=True, slots=True)
class View:
    """What vaultd gives git in one folder, and what that was decided from."""

    stamps: tuple[tuple[str, Stamp], ...]
    overrides: tuple[tuple[str, str], ...]
    commands: tuple[str, ...]  #: keys of the repository's own config that name a command


def parse(listing: bytes) -> list[Entry]:
    """``git config --list --show-scope --show-origin -z``: scope NUL origin NUL key LF value NUL."""
    fields = listing.split(b"\0")
    out: list[Entry] = []
    for i in range(0, len(fields) - 2, 3):
        scope, origin, pair = (f.decode("utf-8", "surrogateescape") for f in fields[i : i + 3])
        key, nl, value = pair.partition("\n")
        out.append(Entry(scope, origin.removeprefix("file:"), key, value if nl else None))
    return out


def _split(key: str) -> tuple[str, str | None, str]:
    section, _, rest = key.partition(".")
    if "." not in rest:
        return section, None, rest
    sub, _, name = rest.rpartition(".")
    return section, sub, name


def _local(entry: Entry) -> bool:
    return entry.scope in ("local", "worktree")


def command_keys(entries: list[Entry]) -> list[str]:
    """Keys of the repository's own config (and what it includes) that run a command, send data
    elsewhere or weaken git's checks, each once, in the order found."""
    found: list[str] = []
    for e in entries:
        low = e.key.lower()
        if not _local(e) or not _COMMAND_KEYS.match(low) or low in found:
            continue
        if (e.value or "").strip().lower() in _HARMLESS.get(low, ()):
            continue
        found.append(e.key)
    return found


def overrides(entries: list[Entry]) -> list[tuple[str, str]]:
    """The config vaultd gives every git call in a repository whose config lists ``entries``.

    Raises:
        PolicyRefused: POLICY, the config names more drivers or remotes than vaultd neutralises.
    """
    out = list(FIXED)
    named: set[tuple[str, str]] = set()
    for e in entries:
        if not _local(e):
            continue
        section, sub, name = _split(e.key)
        section = section.lower()
        if section == "pager" and sub is None:
            out.append((e.key, "false"))
        elif sub is not None and section in NAMED and (section, sub) not in named:
            named.add((section, sub))
            out += [(f"{section}.{sub}.{k}", v) for k, v in NAMED[section]]
    if len(named) > MAX_NAMED:
        raise PolicyRefused(
            f"the repository's git config defines {len(named)} filter, diff or merge drivers (over {MAX_NAMED}); "
            "vaultd does not run git there"
        )
    local = {e.key.lower() for e in entries if _local(e)}
    for e in entries:
        if e.scope in ("system", "global") and e.value is not None and _CARRIED.match(e.key.lower()):
            if e.key.lower() in ("user.name", "user.email") and e.key.lower() in local:
                continue  # the repository's own identity wins, as git would have it
            out.append((e.key, e.value))
    return out


def _stamp(path: str) -> Stamp:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _watched(entries: list[Entry], top: str, dirs: list[str]) -> list[str]:
    """Every file the config came from or may come from, and the folders holding them."""
    files = [os.path.join(d, name) for d in dirs for name in ("config", "config.worktree")]
    for e in entries:
        if e.origin and e.scope != "command":
            files.append(os.path.join(top, e.origin))
        low = e.key.lower()
        if e.value and (low == "include.path" or (low.startswith("includeif.") and low.endswith(".path"))):
            base = os.path.dirname(os.path.join(top, e.origin)) if e.origin else top
            files.append(os.path.join(base, os.path.expanduser(e.value)))
    out: list[str] = []
    for f in files:
        for p in (f, os.path.dirname(f)):
            if p not in out:
                out.append(p)
    return out


class Cache:
    """Views by folder, each checked against its files' stamps before use (thread-safe)."""

    def __init__(self) -> None:
        self._views: dict[str, View] = {}
        self._lock = threading.Lock()

    def get(self, folder: str, locate: Callable[[], tuple[str | None, list[str]]], listing: Callable[[], list[Entry]]) -> View:
        """The view of ``folder``; ``locate`` gives its work tree and git folders (None: no
        repository), ``listing`` its config as git reads it there."""
        with self._lock:
            view = self._views.get(folder)
        if view is not None and all(_stamp(p) == s for p, s in view.stamps):
            return view
        top, dirs = locate()
        entries = listing()
        if top is None:  # not in a repository: nothing of its own to distrust; not kept
            return View(stamps=(), overrides=tuple(overrides(entries)), commands=())
        for _ in range(3):  # stamped, then read again: a change in between is seen now or at the next call
            stamps = tuple((p, _stamp(p)) for p in _watched(entries, top, dirs))
            again = listing()
            if again == entries:
                break
            entries = again
        view = View(stamps=stamps, overrides=tuple(overrides(entries)), commands=tuple(command_keys(entries)))
        with self._lock:
            if len(self._views) > MAX_KEPT:
                self._views.clear()
            self._views[folder] = view
        return view


def env_of(pairs: tuple[tuple[str, str], ...] | list[tuple[str, str]]) -> dict[str, str]:
    """The ``GIT_CONFIG_COUNT`` environment that gives git these keys, in this order."""
    env = {"GIT_CONFIG_COUNT": str(len(pairs))}
    for i, (k, v) in enumerate(pairs):
        env[f"GIT_CONFIG_KEY_{i}"] = k
        env[f"GIT_CONFIG_VALUE_{i}"] = v
    return env


def folder_key(cwd: Path) -> str:
    return os.path.realpath(cwd)
