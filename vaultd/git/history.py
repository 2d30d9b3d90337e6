"""Reading a note's history: the commits that touched it (renames followed), its bytes at a
revision, a diff between two of its versions. Read-only: no lock, no index file, no write.

Revisions come from callers; each is resolved to a commit id with ``--end-of-options`` before use,
so no revision can act as an option, and only the resolved id is passed on.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from protocol.errors import Issue, Severity
from protocol.issue_codes import IssueCode
from protocol.methods.git import MAX_DIFF_TEXT_BYTES, HistoryEntry, HistoryStatus
from vaultd.errors import NotFound, VaultError
from vaultd.git import command, objects
from vaultd.git.checkpoint import TRAILER_CHANNEL, TRAILER_OP
from vaultd.git.repo import Repo, find, is_ancestor, resolve

if TYPE_CHECKING:
    from pathlib import Path

_STATUS = {"A": HistoryStatus.ADDED, "M": HistoryStatus.MODIFIED, "D": HistoryStatus.DELETED, "R": HistoryStatus.RENAMED}
_TRAILER = "%(trailers:key={},valueonly,separator=%x2c)"
_FORMAT = "--format=%x1e" + "%x1f".join(["%H", "%at", "%an", "%s", _TRAILER.format(TRAILER_OP), _TRAILER.format(TRAILER_CHANNEL), ""])


def commit_of(repo: Repo, rev: str) -> str:
    """The commit a caller's revision names.

    Raises:
        NotFound: NOT_FOUND, it names no commit of this repository.
    """
    found = resolve(repo, rev)
    if found is None:
        raise NotFound(f"no commit {rev!r} in the vault's repository; see 'vaultctl history NOTE' for its revisions")
    return found


def log(repo: Repo, rel: str, limit: int) -> tuple[list[HistoryEntry], bool]:
    """The commits on HEAD's history that touched ``rel``, newest first, renames followed."""
    out = command.run(
        repo.top, "log", "--follow", "-M", "--name-status", "-z", _FORMAT, "-n", str(limit + 1), "HEAD", "--", repo.path(rel), ok=(0, 128)
    )
    if out.status != 0:
        return [], False  # an unborn branch: no history yet
    entries = []
    for record in out.stdout.split(b"\x1e")[1:]:
        head, _, names = record.partition(b"\x1f\0")
        fields = head.decode("utf-8", "replace").split("\x1f")
        parts = [p.decode("utf-8", "surrogateescape") for p in names.lstrip(b"\n").split(b"\0") if p]
        if len(fields) < 6 or not parts:
            continue
        status = _STATUS.get(parts[0][:1], HistoryStatus.MODIFIED)
        old, path = (parts[1], parts[2]) if status is HistoryStatus.RENAMED and len(parts) > 2 else (None, parts[-1])
        entries.append(
            HistoryEntry(
                commit=fields[0],
                date=float(fields[1] or 0),
                author=fields[2],
                subject=fields[3],
                op_id=fields[4].split(",")[0] or None,
                channel=fields[5].split(",")[0] or None,
                path=repo.rel(path) or path,
                status=status,
                renamed_from=(repo.rel(old) or old) if old else None,
            )
        )
    return entries[:limit], len(entries) > limit


def path_at(repo: Repo, rel: str, commit: str) -> str | None:
    """Where the note now at ``rel`` was in ``commit`` (renames followed), or None if it was nowhere."""
    if objects.blob_at(repo, commit, repo.path(rel)) is not None:
        return rel
    entries, _ = log(repo, rel, 200)
    for entry in entries:
        if entry.status is not HistoryStatus.DELETED and (entry.commit == commit or is_ancestor(repo, entry.commit, commit)):
            return entry.path if objects.blob_at(repo, commit, repo.path(entry.path)) else None
    return None


@dataclass(frozen=True, slots=True)
class Version:
    commit: str | None  #: None: the file on disk
    path: str  #: vault-relative
    data: bytes | None  #: None: absent


def at(repo: Repo, rel: str, rev: str) -> Version:
    """The note's bytes at a revision.

    Raises:
        NotFound: NOT_FOUND, no such revision, or the note did not exist there.
    """
    commit = commit_of(repo, rev)
    where = path_at(repo, rel, commit)
    entry = objects.blob_at(repo, commit, repo.path(where)) if where else None
    if where is None or entry is None:
        raise NotFound(f"{rel} did not exist at {rev} ({commit[:12]}); see 'vaultctl history' for where it was")
    return Version(commit, where, objects.read_blob(repo, entry.oid))


def last_commit(repo: Repo, rel: str) -> Version | None:
    """The note as its newest commit holds it, or None when no commit has it."""
    entries, _ = log(repo, rel, 1)
    if not entries or entries[0].status is HistoryStatus.DELETED:
        return None
    found = objects.blob_at(repo, entries[0].commit, repo.path(entries[0].path))
    return Version(entries[0].commit, entries[0].path, objects.read_blob(repo, found.oid) if found else None)


@dataclass(frozen=True, slots=True)
class Diff:
    text: str
    truncated: bool
    added: int
    removed: int


def unified(old: Version | None, new: Version) -> Diff:
    """A unified diff of two versions, cut at :data:`MAX_DIFF_TEXT_BYTES`."""
    a = (old.data if old and old.data is not None else b"").decode("utf-8", "replace").splitlines(keepends=True)
    b = (new.data or b"").decode("utf-8", "replace").splitlines(keepends=True)
    a_name = f"a/{old.path}" if old and old.data is not None else "/dev/null"
    b_name = f"b/{new.path}" if new.data is not None else "/dev/null"
    lines = list(difflib.unified_diff(a, b, a_name, b_name, n=3))
    added = sum(1 for ln in lines if ln.startswith("+") and not ln.startswith("+++"))
    removed = sum(1 for ln in lines if ln.startswith("-") and not ln.startswith("---"))
    text = "".join(ln if ln.endswith("\n") else ln + "\n\\ No newline at end of file\n" for ln in lines)
    raw = text.encode("utf-8")
    if len(raw) <= MAX_DIFF_TEXT_BYTES:
        return Diff(text, False, added, removed)
    return Diff(raw[:MAX_DIFF_TEXT_BYTES].decode("utf-8", "ignore"), True, added, removed)


def find_op_commit(repo: Repo, op_id: str) -> str | None:
    """The commit recording a vaultd operation (by its trailer), on HEAD's history."""
    out = command.run(repo.top, "log", "-F", f"--grep={TRAILER_OP}: {op_id}", "--format=%H", "-n", "1", "HEAD", ok=(0, 128))
    found = out.text.strip()
    return found or None if out.status == 0 else None


def undo_hint(vault: Path, op_id: str) -> list[Issue]:
    """For an operation op.undo no longer keeps: the issue (R02) saying git history still has it."""
    try:
        repo = find(vault)
        commit = find_op_commit(repo, op_id) if repo is not None else None
    except VaultError:
        return []
    if commit is None:
        return []
    message = f"git history records {op_id} as commit {commit[:12]}: preview its reversal with 'vaultctl revert {op_id}' (op.revert)"
    return [Issue(code=IssueCode.R02, severity=Severity.INFO, message=message)]
