"""Path safety (V04), deny paths (P02) and the write channel policy (P01).

:func:`check_new_path` is pure: it judges the vault-relative POSIX path a write would create or
replace, and asks the caller's index (``existing_keys``) about case and Unicode-normalization
collisions. :func:`check_inside_vault` is the one check here that touches the filesystem: it makes
sure the write cannot escape the vault through a symlink or reach a file outside it through a hard
link. Both return issues; neither raises.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
import threading
import time
import unicodedata
from collections import OrderedDict
from functools import lru_cache
from typing import TYPE_CHECKING, Final

from protocol.errors import Issue
from protocol.issue_codes import IssueCode
from protocol.methods.common import Channel
from protocol.methods.vaults import WritePolicy
from vaultd.vault.layout import SKIPPED_DIRS

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

MAX_COMPONENT_BYTES: Final = 255  #: the common file-name limit (ext4, APFS, NTFS in UTF-16 is similar)
MAX_PATH_BYTES: Final = 1024  #: the whole vault-relative path, in UTF-8 bytes
NOTE_SUFFIX: Final = ".md"  #: case-sensitive, like the index
RESERVED_NAMES: Final = SKIPPED_DIRS  #: compared casefolded (every one is lower case)

# C0 controls, DEL and C1 controls: invisible in listings, hostile to terminals and sync tools.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# The daemon's own temp files are ``.vaultd-<anything>.tmp``; a user file must never look like one.
_TEMP_NAME = re.compile(r"\.vaultd-.*\.tmp", re.IGNORECASE | re.DOTALL)


def path_key(rel: str) -> str:
    """The collision key of a path: NFC, casefolded, NFC again (casefolding can denormalize).

    Two paths with the same key name the same file on a case-insensitive or normalizing
    filesystem (macOS, Windows) and in most sync tools. The caller's index keys paths with this.
    """
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", rel).casefold())


def _v04(rel: str, message: str) -> Issue:
    return Issue(code=IssueCode.V04, message=message, path=rel)


def _component_issue(comp: str) -> str | None:
    if comp == "":
        return "the path has an empty component (a doubled, leading or trailing '/')"
    if comp in (".", ".."):
        return f"the path has a {comp!r} component; give a plain path inside the vault"
    if comp.casefold() in RESERVED_NAMES:
        return f"{comp!r} is reserved for tools and cannot be written; choose another folder"
    if len(comp.encode("utf-8")) > MAX_COMPONENT_BYTES:
        return f"a path component is over {MAX_COMPONENT_BYTES} bytes in UTF-8; shorten it"
    if _TEMP_NAME.fullmatch(comp):
        return "the name looks like a vaultd temp file (.vaultd-*.tmp); choose another name"
    if comp[-1] in ". ":
        return f"the component {comp!r} ends in a dot or a space, which Windows and sync tools drop"
    return None


def check_new_path(
    rel: str,
    existing_keys: Callable[[str], list[str]] | None = None,
    *,
    note: bool = True,
) -> list[Issue]:
    """Judge a vault-relative path a write would create or replace (V04).

    Args:
        rel: the vault-relative POSIX path, as the caller will write it.
        existing_keys: returns the existing paths whose :func:`path_key` equals the given key;
            any that differs from ``rel`` is a collision on case-insensitive or normalizing disks.
        note: a note path must end in ``.md``; other files (attachments, reports) need not.

    Returns:
        One issue per problem found; empty when the path is safe.
    """
    try:
        encoded = rel.encode("utf-8")
    except UnicodeEncodeError:
        return [_v04(rel, "the path is not valid Unicode (it holds a lone surrogate)")]
    if rel == "":
        return [_v04(rel, "the path is empty")]
    issues: list[Issue] = []
    if _CONTROL.search(rel):
        issues.append(_v04(rel, "the path holds a control character (NUL, C0, DEL or C1); remove it"))
    if "\\" in rel:
        issues.append(_v04(rel, "the path holds a backslash; use '/' between folders"))
    if rel.startswith("/") or re.match(r"[A-Za-z]:(?:/|$)", rel):
        issues.append(_v04(rel, "the path is absolute; give it relative to the vault root"))
    if len(encoded) > MAX_PATH_BYTES:
        issues.append(_v04(rel, f"the path is over {MAX_PATH_BYTES} bytes in UTF-8; shorten it"))
    seen: set[str] = set()
    for comp in rel.split("/"):
        problem = _component_issue(comp)
        if problem is not None and problem not in seen:
            seen.add(problem)
            issues.append(_v04(rel, problem))
    name = rel.rsplit("/", 1)[-1]
    if note and (not name.endswith(NOTE_SUFFIX) or name == NOTE_SUFFIX):
        issues.append(_v04(rel, f"a note path must end in {NOTE_SUFFIX!r} (lowercase) after a name"))
    if existing_keys is not None and not issues:
        for other in sorted(set(existing_keys(path_key(rel)))):
            if other != rel:
                issues.append(
                    _v04(
                        rel,
                        f"the path collides with {other!r} by letter case or Unicode form; use that path or choose another name",
                    )
                )
    return issues


def check_inside_vault(root: Path, rel: str) -> list[Issue]:
    """Make sure writing ``root/rel`` stays inside the vault (V04); reads the filesystem.

    Every existing parent folder must be a real folder (no symlink, even one pointing inside)
    that resolves inside ``root``. The target, when it exists, must be a regular file with one
    link: a symlink could point anywhere, and a hard link may share its bytes with a file outside
    the vault. Missing parents are fine; the writer creates them.
    """
    parts = rel.split("/")
    if rel.startswith("/") or any(p in ("", ".", "..") for p in parts):
        return [_v04(rel, "the path is not a plain vault-relative path")]
    try:
        real_root = os.path.realpath(root)
        current = real_root
        for part in parts[:-1]:
            current = os.path.join(current, part)
            try:
                st = os.lstat(current)
            except FileNotFoundError:
                return []  # the rest does not exist yet, so nothing below can be a symlink
            if stat.S_ISLNK(st.st_mode):
                return [_v04(rel, "a folder on the path is a symlink; vaultd does not write through links")]
            if not stat.S_ISDIR(st.st_mode):
                return [_v04(rel, "a component on the path exists and is not a folder")]
        parent = os.path.realpath(current)
        if os.path.commonpath([real_root, parent]) != real_root:
            return [_v04(rel, "the path resolves outside the vault")]
        try:
            st = os.lstat(os.path.join(current, parts[-1]))
        except FileNotFoundError:
            return []
    except OSError as exc:
        return [_v04(rel, f"the path cannot be checked ({type(exc).__name__}); check its permissions")]
    if stat.S_ISLNK(st.st_mode):
        return [_v04(rel, "the target is a symlink; vaultd does not write through links")]
    if not stat.S_ISREG(st.st_mode):
        return [_v04(rel, "the target exists and is not a regular file")]
    if st.st_nlink > 1:
        return [_v04(rel, "the target has other hard links, possibly outside the vault; vaultd will not write it")]
    return []


_NOT_NAMES: Final = frozenset({"", ".", ".."})


LISTINGS_KEPT: Final = 64  #: folders whose entries are kept by key between writes
SETTLED_NS: Final = 5_000_000_000  #: a folder changed more recently is listed again at each write


class _Listings:
    """Each folder's entries by :func:`path_key`, kept while the folder is unchanged.

    A write looks up its folders' spellings; listing a folder of 30,000 notes and keying every
    name cost 20 ms a write. A listing is reused while the folder's identity and change time
    (ctime: no tool can set it back) are what they were; it is kept only for a folder unchanged
    for a while, so a change within the clock's granularity cannot hide behind an equal time.
    """

    def __init__(self) -> None:
        self._kept: OrderedDict[str, tuple[tuple[int, int, int, int], dict[str, list[str]]]] = OrderedDict()
        self._lock = threading.Lock()  #: writes to different vaults plan on different threads

    def like(self, folder: str, name: str) -> list[str]:
        """Entries of ``folder`` whose key equals ``name``'s (in no particular order)."""
        key = path_key(name)
        try:
            st = os.stat(folder)
        except OSError:
            return []
        stamp = (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns)
        with self._lock:
            kept = self._kept.get(folder)
            if kept is not None and kept[0] == stamp:
                self._kept.move_to_end(folder)
                return kept[1].get(key, [])
        settled = time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) > SETTLED_NS
        try:
            with os.scandir(folder) as entries:
                if not settled:  # listed again at the next write anyway: only the names asked for
                    return [e.name for e in entries if path_key(e.name) == key]
                keyed: dict[str, list[str]] = {}
                for entry in entries:
                    keyed.setdefault(path_key(entry.name), []).append(entry.name)
        except OSError:
            return []
        with self._lock:
            self._kept[folder] = (stamp, keyed)
            self._kept.move_to_end(folder)
            while len(self._kept) > LISTINGS_KEPT:
                self._kept.popitem(last=False)
        return keyed.get(key, [])


_listings = _Listings()


def _exactly_there(folder: str, name: str) -> bool:
    """``name`` is an entry of ``folder`` spelled exactly so, shown without listing the folder.

    An ASCII name needs no normalization; found by lstat, it is there as spelled unless the
    folder ignores case, which the name in the other case tells (the same entry answers).
    """
    if not name.isascii():
        return False
    try:
        st = os.lstat(os.path.join(folder, name))
    except OSError:
        return False
    other = name.swapcase()
    if other == name:
        return True  # no letters: no other spelling has its key
    try:
        twin = os.lstat(os.path.join(folder, other))
    except OSError:
        return True
    return (twin.st_dev, twin.st_ino) != (st.st_dev, st.st_ino)


def _names_like(folder: str, name: str) -> list[str]:
    """Entries of ``folder`` whose key equals ``name``'s; the exact spelling first when present
    (and then alone: every caller takes the exact spelling when there is one)."""
    if _exactly_there(folder, name):
        return [name]
    return sorted(_listings.like(folder, name), key=lambda n: (n != name, n))


def disk_spelling(root: Path, rel: str) -> tuple[str, list[Issue]]:
    """``rel`` with every folder that already exists spelled as it is on disk (V04 when unclear).

    A write to ``Inbox/new.md`` when the disk holds ``inbox/`` goes into ``inbox/`` on every
    filesystem: a case-insensitive one would do so anyway while the index recorded ``Inbox/...``,
    and a case-sensitive one would grow a twin folder that sync tools and other machines cannot
    keep apart. An NFD spelling of an NFC folder resolves the same way. Two folders on disk that
    differ only by case, neither spelled as asked, are refused: the caller must pick one. The
    file name itself is left alone; :func:`disk_twin` says whether it exists under another spelling.
    """
    parts = rel.split("/")
    if any(p in _NOT_NAMES for p in parts):
        return rel, []  # not a plain path: check_new_path refuses it, with a better message
    current = os.path.realpath(root)
    for i, part in enumerate(parts[:-1]):
        names = _names_like(current, part)
        if not names:
            break  # nothing below exists yet: the writer creates it as asked
        if names[0] != part and len(names) > 1:
            return rel, [
                _v04(rel, f"several folders match {part!r} by letter case or Unicode form; give the exact spelling of the one you mean")
            ]
        parts[i] = names[0]
        current = os.path.join(current, names[0])
    return "/".join(parts), []


def disk_twin(root: Path, rel: str) -> str | None:
    """The existing file or folder that ``rel`` names by :func:`path_key`, spelled as on disk.

    ``rel``'s folders should already be spelled as on disk (:func:`disk_spelling`). Returns the
    exact spelling when that exists, another spelling when only that does, None when neither.
    """
    if any(p in _NOT_NAMES for p in rel.split("/")):
        return None
    folder, _, name = rel.rpartition("/")
    names = _names_like(os.path.join(os.path.realpath(root), folder), name)
    if not names:
        return None
    return f"{folder}/{names[0]}" if folder else names[0]


@lru_cache(maxsize=1024)
def _glob_parts(glob: str) -> tuple[str, ...]:
    return tuple(path_key(glob).strip("/").split("/"))


def _match_parts(pat: Sequence[str], parts: Sequence[str]) -> list[bool]:
    """``reach[n]``: whether ``pat`` matches ``parts[:n]``, for every n at once."""
    # Component-level dynamic programming: O(len(pat) * len(parts)) fnmatch calls, each over one
    # bounded component, so no pattern can make matching blow up.
    reach = [False] * (len(parts) + 1)
    reach[0] = True
    for p in pat:
        nxt = [False] * (len(parts) + 1)
        if p == "**":
            seen = False
            for i in range(len(parts) + 1):
                seen = seen or reach[i]
                nxt[i] = seen
        else:
            for i in range(len(parts)):
                if reach[i] and fnmatch.fnmatchcase(parts[i], p):
                    nxt[i + 1] = True
        reach = nxt
        if not any(reach):
            break
    return reach


def matching_glob(rel: str, globs: Sequence[str]) -> str | None:
    """The first glob that matches ``rel`` or one of its folders, else None.

    Matching is on :func:`path_key` of both the glob and the path, whatever the filesystem: a rule
    that held on ext4 but not on APFS or NTFS (or in a sync tool) would let ``PRIVATE/a.md`` or an
    NFD spelling land in a denied ``private/``. Globs go component by component: ``*``, ``?`` and
    ``[...]`` stay inside one component, ``**`` spans any number of them (zero included). A glob
    that matches a folder covers everything below it, so ``private`` and ``private/**`` both match
    ``private/a.md``.
    """
    parts = path_key(rel).split("/")
    for glob in globs:
        if any(_match_parts(_glob_parts(glob), parts)[1:]):
            return glob
    return None


def deny_path_issue(rel: str, deny_globs: Sequence[str]) -> Issue | None:
    """P02 when ``rel`` or one of its folders matches a deny glob (see :func:`matching_glob`)."""
    glob = matching_glob(rel, deny_globs)
    if glob is None:
        return None
    return Issue(
        code=IssueCode.P02,
        message=f"the vault's deny_paths forbid writing here (glob {glob!r}); choose another path",
        path=rel,
    )


_CHANNELS_ALLOWED: Final[dict[WritePolicy, frozenset[Channel]]] = {
    WritePolicy.MCP: frozenset(Channel),
    WritePolicy.CLI: frozenset({Channel.CLI}),
    WritePolicy.NONE: frozenset(),
}


def write_channel_issue(policy: WritePolicy, channel: Channel) -> Issue | None:
    """P01 when the vault's write policy refuses the caller's channel, else None.

    ``mcp`` allows every channel, ``cli`` only the CLI, ``none`` nobody.
    """
    if channel in _CHANNELS_ALLOWED[policy]:
        return None
    if policy is WritePolicy.NONE:
        why = "the vault is read-only (write: none); change its write policy with vaultctl to write"
    else:
        why = f"the vault accepts writes from the CLI only (write: cli), not from {channel.value}"
    return Issue(code=IssueCode.P01, message=why)
