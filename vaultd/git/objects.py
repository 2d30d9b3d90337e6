"""Git objects as vaultd reads and writes them: blob ids, blobs in, blobs out, trees.

A blob's id is computed here from the exact bytes an operation wrote, and every blob git stores
for vaultd is checked against it: what is committed is byte for byte what was written, never
what a clean filter, an end-of-line rule or a later save made of it.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from typing import TYPE_CHECKING

from vaultd.errors import Conflict, Internal, LimitExceeded
from vaultd.git import command

if TYPE_CHECKING:
    from pathlib import Path

    from vaultd.git.repo import Repo

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
MAX_BLOB_BYTES = 64 * 1024 * 1024  #: the largest blob vaultd reads back (a note is far smaller)

REGULAR, EXECUTABLE, SYMLINK = "100644", "100755", "120000"


def blob_id(data: bytes) -> str:
    """The id git gives a blob of these bytes (SHA-1 repositories)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def file_mode(path: Path) -> str:
    """The git mode of a file on disk (regular or executable); a missing file counts as regular."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return REGULAR
    if stat.S_ISLNK(st.st_mode):
        return SYMLINK
    return EXECUTABLE if st.st_mode & stat.S_IXUSR else REGULAR


def write_blobs(repo: Repo, items: list[tuple[str, bytes]]) -> dict[str, str]:
    """Store each (repository path, bytes) as a blob; returns path -> blob id.

    The files are hashed where they lie in one git call (they were just written); a file whose
    blob is not the one its bytes give (changed since, or filtered) is stored from the bytes
    themselves instead, so the id is always that of the exact bytes.

    Raises:
        Internal: INTERNAL, git stored a file under another blob id than its bytes give.
    """
    expected = {path: blob_id(data) for path, data in items}
    if not items:
        return {}
    out = command.run(repo.top, "hash-object", "-w", "--no-filters", "--", *[str(repo.top / p) for p, _ in items], ok=(0, 128))
    got = out.text.split() if out.status == 0 else []
    found: dict[str, str] = {}
    for (path, data), oid in zip(items, got + [""] * (len(items) - len(got)), strict=True):
        if oid != expected[path]:
            oid = command.run(repo.top, "hash-object", "-w", "--no-filters", "--stdin", input=data).text.strip()
            if oid != expected[path]:
                raise Internal(f"git stored {path} as blob {oid}, not {expected[path]}; nothing was committed")
        found[path] = oid
    return found


def write_blob(repo: Repo, data: bytes) -> str:
    """Store bytes as a blob, checking git's answer against the id they must have.

    Raises:
        Internal: INTERNAL, git stored them under another id.
    """
    oid = command.run(repo.top, "hash-object", "-w", "--no-filters", "--stdin", input=data).text.strip()
    if oid != blob_id(data):
        raise Internal(f"git stored a blob as {oid}, not {blob_id(data)}")
    return oid


@dataclass(frozen=True, slots=True)
class TreeEntry:
    mode: str
    oid: str
    path: str  #: repository path


def blob_at(repo: Repo, commit: str, repo_path: str) -> TreeEntry | None:
    """The entry at ``repo_path`` in ``commit``'s tree, or None when the path is absent there."""
    out = command.run(repo.top, "ls-tree", "-z", "--full-tree", commit, "--", repo_path)
    for record in out.stdout.split(b"\0"):
        if not record:
            continue
        meta, _, name = record.partition(b"\t")
        mode, kind, oid = meta.decode().split()
        if kind == "blob" and name.decode("utf-8", "surrogateescape") == repo_path:
            return TreeEntry(mode, oid, repo_path)
    return None


def sizes(repo: Repo, oids: list[str]) -> dict[str, int]:
    """Each object's size in bytes, without reading it (``cat-file --batch-check``).

    Raises:
        Conflict: CONFLICT, an object is missing from the repository.
    """
    wanted = sorted(set(oids))
    if not wanted:
        return {}
    out = command.run(repo.top, "cat-file", "--batch-check", input=("\n".join(wanted) + "\n").encode(), limit=128 * (len(wanted) + 1))
    found: dict[str, int] = {}
    for oid, line in zip(wanted, out.text.splitlines(), strict=False):
        header = line.split()
        if len(header) < 3 or header[1] == "missing":
            raise Conflict(f"the repository lacks object {oid}; fetch again, or run 'git fsck'")
        found[oid] = int(header[2])
    if len(found) != len(wanted):
        raise Conflict("git did not describe every object asked for; run 'git fsck'")
    return found


def read_blobs(repo: Repo, oids: list[str], limit: int = MAX_BLOB_BYTES) -> dict[str, bytes]:
    """The bytes of each blob, through one ``cat-file --batch``, each size checked first: no
    blob over ``limit`` is ever read, and git's output is read up to exactly what was announced.

    Raises:
        Conflict: CONFLICT, a blob is missing from the repository.
        LimitExceeded: LIMIT, a blob is larger than ``limit``.
        Internal: INTERNAL, git printed another size than it announced.
    """
    wanted = sorted(set(oids))
    if not wanted:
        return {}
    announced = sizes(repo, wanted)
    for oid, size in announced.items():
        if size > limit:
            raise LimitExceeded(f"object {oid} is {size} bytes, over the {limit}-byte bound; it was not read")
    expected = sum(announced.values()) + 128 * len(wanted)
    out = command.run(repo.top, "cat-file", "--batch", input=("\n".join(wanted) + "\n").encode(), limit=expected).stdout
    found: dict[str, bytes] = {}
    at = 0
    for oid in wanted:
        nl = out.index(b"\n", at)
        header = out[at:nl].decode().split()
        if len(header) < 3 or header[1] == "missing":
            raise Conflict(f"the repository lacks object {oid}; fetch again, or run 'git fsck'")
        size = int(header[2])
        if size != announced[oid]:
            raise Internal(f"git described object {oid} as {announced[oid]} bytes and printed {size}")
        found[oid] = out[nl + 1 : nl + 1 + size]
        at = nl + 1 + size + 1
    return found


def read_blob(repo: Repo, oid: str, limit: int = MAX_BLOB_BYTES) -> bytes:
    return read_blobs(repo, [oid], limit)[oid]


def tree_of(repo: Repo, commit: str) -> str:
    return command.line(repo.top, "rev-parse", "--verify", f"{commit}^{{tree}}")
