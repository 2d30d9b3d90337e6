"""Origin's commits, checked before a byte of them is written or the branch moves.

A remote is untrusted input: whoever can push to it can put any tree in a commit. git checks the
objects a fetch receives (``fetch.fsckObjects``, see :mod:`vaultd.git.trust`); this module checks
what a sync would integrate, the change from the last common commit to origin's head, against
git's own path rules and the vault's write rules, and every file it would read against its size
bound. Anything refused refuses the whole sync (R08) before anything moves: the branch, the
person's index and the files stay exactly as they were.

Refused:

- a path git itself refuses: a ``.git`` component in any case, or in a spelling a case-insensitive
  (HFS+: ignorable code points) or Windows (trailing dots and spaces, ``git~1``, streams) file
  system reads as ``.git``; ``.``, ``..`` or an empty component;
- a path in vaultd's own folder (``.vaultd/``) or Obsidian's trash (``.trash/``), which vaultd
  keeps out of every clone;
- a new path the write rules refuse (V04: controls, names Windows drops, over-long names), one
  the vault's path screen refuses (V06 secrets, V07 personal data), or one that differs only by
  letter case or Unicode form from a file or folder the vault already has or origin also brings
  (``vaultctl new`` refuses those twins: one of them would overwrite the other on a
  case-insensitive disk);
- a file vaultd would read and write over its bound: a note over ``MAX_NOTE_BYTES``, any other
  file over :data:`vaultd.git.objects.MAX_BLOB_BYTES`. Sizes are asked of git before any blob
  is read.

Files vaultd never writes (under ``.obsidian/``, links, submodules) are not refused; the sync
leaves them to git as before (see :mod:`vaultd.git.incoming`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, NoReturn

from protocol.errors import Issue, Severity
from protocol.issue_codes import IssueCode
from protocol.limits import MAX_NOTE_BYTES
from vaultd.errors import LimitExceeded, PolicyRefused
from vaultd.git import command, incoming, objects
from vaultd.policy import RESERVED_NAMES, check_new_path
from vaultd.policy.path_screen import path_screen_issues
from vaultd.policy.paths import path_key
from vaultd.vault.layout import STATE_DIR

if TYPE_CHECKING:
    from pathlib import Path

    from protocol.methods.vaults import Kind, PiiSetting
    from vaultd.git.repo import Repo

MAX_LISTED = 20  #: problems a refusal names
MAX_TREE_BYTES = 64 * 1024 * 1024  #: the tree listings a check reads (about 500,000 paths)
KEPT_OUT = (STATE_DIR, ".trash")  #: folders no commit of origin may write into
#: Code points HFS+ ignores in names, so ``.g\u200cit`` is ``.git`` there (git's is_hfs_dotgit).
_IGNORABLE = frozenset([*range(0x200C, 0x2010), *range(0x202A, 0x202F), *range(0x206A, 0x2070), 0xFEFF])


def refuse(problems: list[str], why: str, *, limit: bool = False) -> NoReturn:
    """Raise the sync's refusal (R08), naming at most :data:`MAX_LISTED` problems."""
    shown = "; ".join(problems[:MAX_LISTED]) + (f"; and {len(problems) - MAX_LISTED} more" if len(problems) > MAX_LISTED else "")
    message = (
        f"origin's commits are not integrated: {why}: {shown}; nothing was integrated, "
        "and the branch, the index and the files are as they were"
    )
    issues = [Issue(code=IssueCode.R08, severity=Severity.ERROR, message=p) for p in problems[:MAX_LISTED]]
    raise (LimitExceeded if limit else PolicyRefused)(message, issues=issues)


def git_refuses(component: str) -> bool:
    """Whether git (with ``core.protectHFS`` and ``core.protectNTFS``) refuses a path component."""
    if component in ("", ".", "..") or "\0" in component:
        return True
    low = component.lower()
    if "".join(c for c in low if ord(c) not in _IGNORABLE) == ".git":
        return True
    for stem in (".git", "git~1"):
        rest = low[len(stem) :]
        if low.startswith(stem) and (rest.strip(" .") == "" or rest.lstrip(" .").startswith(":")):
            return True
    return False


def shown(path: str) -> str:
    """A path as a refusal names it: printable, quoted."""
    return repr(path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace"))


def _tree_paths(repo: Repo, rev: str | None) -> list[str]:
    if rev is None:
        return []
    out = command.run(repo.top, "ls-tree", "-r", "-z", "--name-only", "--full-tree", rev, limit=MAX_TREE_BYTES)
    return [p.decode("utf-8", "surrogateescape") for p in out.stdout.split(b"\0") if p]


def _prefixes(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def _twins(repo: Repo, root: Path, tip: str, local: str | None, added: list[str], gone: set[str]) -> list[str]:
    """New paths of origin that differ only by case or Unicode form from another file or folder
    the vault would hold (in either branch, or on disk and not removed by origin)."""
    spellings: dict[str, set[str]] = {}
    for path in {*_tree_paths(repo, tip), *(p for p in _tree_paths(repo, local) if p not in gone)}:
        for prefix in _prefixes(path):
            spellings.setdefault(path_key(prefix), set()).add(prefix)
    listed: dict[str, dict[str, list[str]]] = {}  #: folder -> key -> names on disk (each folder listed once)

    def on_disk(head: str, name: str) -> list[str]:
        if head not in listed:
            try:
                names = os.listdir(repo.top / head)
            except OSError:
                names = []
            listed[head] = {}
            for n in names:
                listed[head].setdefault(path_key(n), []).append(f"{head}/{n}" if head else n)
        return listed[head].get(path_key(name), [])

    found: list[str] = []
    for path in added:
        rel = repo.rel(path)
        if rel is None:
            continue
        for prefix in _prefixes(path):
            head, _, name = prefix.rpartition("/")
            others = (spellings.get(path_key(prefix), set()) | {p for p in on_disk(head, name) if p not in gone}) - {prefix}
            if others:
                found.append(f"{shown(rel)} differs only by letter case or Unicode form from {shown(sorted(others)[0])}")
                break
    return found


def check(repo: Repo, root: Path, base: str, tip: str, *, local: str | None, pii: PiiSetting | None, kind: Kind) -> None:
    """Refuse (R08) what the change from ``base`` to origin's ``tip`` would bring, if anything
    of it is refused (see the module's list); nothing is read but trees and object sizes.

    Raises:
        PolicyRefused: POLICY, a path is refused.
        LimitExceeded: LIMIT, a file is over its bound.
    """
    changes = incoming.raw_changes(repo, base, tip)
    problems: list[str] = []
    added: list[str] = []
    gone = {path for path, (_, after) in changes.items() if after is None}
    sized: dict[str, tuple[str, int]] = {}
    for path, (before, after) in changes.items():
        if after is None:
            continue
        rel = repo.rel(path)
        if rel is None:
            continue
        parts = path.split("/")
        if any(git_refuses(c) for c in parts):
            problems.append(f"{shown(rel)}: a path git itself refuses")
            continue
        comps = rel.split("/")
        if len(comps) > 1 and comps[0].casefold() in KEPT_OUT:
            problems.append(f"{shown(rel)}: inside {comps[0]}/, which vaultd keeps out of every clone")
            continue
        if after.mode not in (objects.REGULAR, objects.EXECUTABLE) or any(c.casefold() in RESERVED_NAMES for c in comps):
            continue  # a file vaultd never writes (.obsidian/, a link, a submodule): left to git
        if before is None:
            issues = check_new_path(rel, note=rel.lower().endswith(".md"))
            if issues:
                problems.append(f"{shown(rel)}: {issues[0].message}")
                continue
            if any(i.severity is Severity.ERROR for i in path_screen_issues(rel, pii, kind)):
                problems.append("a new path the vault's path screen refuses (its name is not repeated here)")
                continue
            added.append(path)
        bound = MAX_NOTE_BYTES if rel.lower().endswith(".md") else objects.MAX_BLOB_BYTES
        sized[after.oid] = (rel, bound)
    if problems:
        refuse(problems, "they write paths vaultd refuses")
    if added:
        twins = _twins(repo, root, tip, local, added, gone)
        if twins:
            refuse(twins, "they add a case twin of a file or folder the vault has, which 'vaultctl new' refuses")
    over = [
        f"{shown(rel)} is {size} bytes, over the {bound}-byte bound"
        for oid, size in objects.sizes(repo, list(sized)).items()
        for rel, bound in [sized[oid]]
        if size > bound
    ]
    if over:
        refuse(over, "they hold files over vaultd's bounds (none was read)", limit=True)
