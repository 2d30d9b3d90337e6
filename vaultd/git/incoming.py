"""What the remote's commits bring, decided file by file in three ways (worker thread, read-only).

For every path the remote changed since the last common commit (``base``), with "ours" the file
as it is on disk now (the local commits and any edit since) and "theirs" the remote's version:

- ours is theirs: nothing to do;
- ours is base (only the remote changed it): take theirs;
- theirs is base (only we changed it): keep ours;
- both changed: the vault's operation log merges as a union of lines; a note merges
  (:mod:`vaultd.git.merge`) and a clean merge is written; otherwise theirs is written and the
  note becomes a *conflict*: ours is stored as a blob and a proposal will hold both versions.
  A modified file wins over a deletion on the other side (nothing is lost either way).

Paths vaultd never writes (its own folder, ``.git``, ``.obsidian``, ``.trash``, links, submodules,
names its path rules refuse) are not written to disk: the merge commit takes the remote's entry
when only the remote changed them, and the sync reports them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from vaultd.git import command, objects
from vaultd.git.merge import Labels, merge_log, merge_note
from vaultd.txn import journal
from vaultd.txn.engine import read_current
from vaultd.txn.plan import MAX_OP_BYTES

if TYPE_CHECKING:
    from pathlib import Path

    from vaultd.git.repo import Repo
    from vaultd.git.staging import Entry

_WRITABLE_MODES = (objects.REGULAR, objects.EXECUTABLE)


@dataclass(frozen=True, slots=True)
class Side:
    mode: str
    oid: str


@dataclass(slots=True)
class Conflict:
    rel: str
    base: str | None  #: blob ids; None: absent on that side
    ours: str | None
    theirs: str | None
    kept: str  #: "origin" or "this machine": which version the vault holds after the sync
    needs_proposal: bool = True


@dataclass(slots=True)
class Incoming:
    writes: dict[str, bytes | None] = field(default_factory=dict)  #: vault path -> new bytes (None: remove)
    befores: dict[str, bytes | None] = field(default_factory=dict)  #: vault path -> its bytes now
    tree: dict[str, Entry] = field(default_factory=dict)  #: repository path -> entry for the merge commit
    conflicts: list[Conflict] = field(default_factory=list)
    untouched: list[str] = field(default_factory=list)  #: vault paths vaultd does not write (left to git)

    @property
    def count(self) -> int:
        return len(self.writes)


def raw_changes(repo: Repo, old: str, new: str) -> dict[str, tuple[Side | None, Side | None]]:
    """Repository paths under the vault that differ between two commits (or trees), each with its
    entry before and after (None: absent)."""
    out = command.run(repo.top, "diff", "--raw", "-z", "--no-renames", "--no-abbrev", "--no-ext-diff", old, new, "--", repo.pathspec)
    fields = out.stdout.split(b"\0")
    found: dict[str, tuple[Side | None, Side | None]] = {}
    i = 0
    while i + 1 < len(fields) and fields[i]:
        meta = fields[i].decode().lstrip(":").split()
        path = fields[i + 1].decode("utf-8", "surrogateescape")
        i += 2
        old_mode, new_mode, old_oid, new_oid = meta[0], meta[1], meta[2], meta[3]
        before = None if set(old_oid) == {"0"} else Side(old_mode, old_oid)
        after = None if set(new_oid) == {"0"} else Side(new_mode, new_oid)
        found[path] = (before, after)
    return found


def writable(rel: str, side: Side | None) -> bool:
    if side is not None and side.mode not in _WRITABLE_MODES:
        return False
    return journal.path_issue(rel, created=True) is None


def plan(repo: Repo, root: Path, base: str, remote: str, *, local: str | None, log_rel: str, labels: Labels, work: Path) -> Incoming:
    """Decide every path the remote changed since ``base`` (see the module's rules)."""
    result = Incoming()
    remote_side = raw_changes(repo, base, remote)
    local_side = raw_changes(repo, base, local) if local is not None and base != local else {}
    wanted: list[str] = []
    for path, (b, t) in remote_side.items():
        rel = repo.rel(path)
        if rel is None:
            continue
        if not writable(rel, t) or not writable(rel, b):
            # Not written to disk. The merge takes origin's entry unless this side changed it too.
            result.untouched.append(rel)
            if path not in local_side:
                result.tree[path] = None if t is None else (t.mode, t.oid)
            continue
        wanted += [s.oid for s in (b, t) if s is not None]
    blobs = objects.read_blobs(repo, wanted, MAX_OP_BYTES)
    for path, (b, t) in remote_side.items():
        rel = repo.rel(path)
        if rel is None or rel in result.untouched:
            continue
        ours = read_current(root, rel, MAX_OP_BYTES)
        ours_oid = None if ours is None else objects.blob_id(ours)
        base_oid, theirs_oid = (b.oid if b else None), (t.oid if t else None)
        theirs = blobs[theirs_oid] if theirs_oid else None
        if ours_oid == theirs_oid:
            if t is not None:
                result.tree[path] = (t.mode, t.oid)
            continue
        if ours_oid == base_oid:
            _take(result, rel, path, ours, theirs, t)
        elif theirs_oid == base_oid:
            continue  # only this machine changed it: the merge keeps ours
        elif theirs is None:
            # Deleted there, changed here: the changed file stays (and origin gets it back).
            assert ours is not None
            result.tree[path] = (objects.file_mode(repo.top / path), objects.write_blob(repo, ours))
            result.conflicts.append(Conflict(rel, base_oid, ours_oid, None, kept="this machine", needs_proposal=False))
        elif ours is None:
            _take(result, rel, path, ours, theirs, t)  # deleted here, changed there: it comes back
            result.conflicts.append(Conflict(rel, base_oid, None, theirs_oid, kept="origin", needs_proposal=False))
        else:
            base_bytes = blobs[base_oid] if base_oid else None
            if rel == log_rel:
                merged: bytes | None = merge_log(work, base_bytes, ours, theirs)
            else:
                note = merge_note(work, base_bytes, ours, theirs, labels) if rel.lower().endswith(".md") else None
                merged = note.data if note is not None and note.clean else None
            if merged is not None:
                result.befores[rel], result.writes[rel] = ours, merged
                result.tree[path] = (objects.file_mode(repo.top / path), objects.write_blob(repo, merged))
                continue
            objects.write_blob(repo, ours)  # kept in the object store for the proposal, whatever happens next
            _take(result, rel, path, ours, theirs, t)
            result.conflicts.append(Conflict(rel, base_oid, ours_oid, theirs_oid, kept="origin"))
    return result


def _take(result: Incoming, rel: str, path: str, ours: bytes | None, theirs: bytes | None, t: Side | None) -> None:
    result.befores[rel], result.writes[rel] = ours, theirs
    result.tree[path] = None if t is None else (t.mode, t.oid)
