"""A vault of hostile names on disk for one round: the files written (or refused by the
filesystem), the bytes and modes of everything below the vault to compare before and after, and
the tally of what the round tried, saw and found wrong."""

from __future__ import annotations

import errno
import os
import stat
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from reliability.stress.name_catalogue import FOLDERS, NAME_MAX, decode, expect, padded, shown, utf8

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from pathlib import Path


# -- the tally -------------------------------------------------------------------------------------


class NameTally:
    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.failures: list[str] = []

    def fail(self, what: str) -> None:
        self.counts["failures"] += 1
        if len(self.failures) < 40:
            self.failures.append(what[:600])

    def reply(self, where: str, reply: dict[str, Any]) -> dict[str, Any] | None:
        """Count one reply; a failure unless it is a result or a structured, non-INTERNAL error."""
        self.counts["replies.checked"] += 1
        if "result" in reply:
            result: dict[str, Any] = reply["result"]
            return result
        err = reply.get("error")
        code = (err or {}).get("data", {}).get("code") if isinstance(err, dict) else None
        if not isinstance(code, str):
            self.fail(f"{where}: malformed reply {reply!r:.300}")
        elif code == "INTERNAL":
            self.counts["replies.internal"] += 1
            self.fail(f"{where}: INTERNAL {reply!r:.300}")
        else:
            self.counts[f"refusals.{code}"] += 1
        return None


# -- files on disk ---------------------------------------------------------------------------------


def at_path(root: Path, rel: bytes) -> bytes:
    return os.fsencode(str(root)) + b"/" + rel


def write_file(root: Path, rel: bytes, text: str) -> bool:
    """Create ``root/rel`` (folders too); False when the filesystem refuses the name."""
    try:
        folder = rel.rpartition(b"/")[0]
        if folder:
            os.makedirs(at_path(root, folder), exist_ok=True)
        fd = os.open(at_path(root, rel), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except OSError as exc:
        if exc.errno in (errno.ENAMETOOLONG, errno.EEXIST, errno.EILSEQ, errno.EINVAL, errno.ENOTDIR, errno.EISDIR):
            return False
        raise
    try:
        os.write(fd, text.encode("utf-8"))
    finally:
        os.close(fd)
    return True


def disk_state(root: Path) -> dict[bytes, tuple[int, bytes]]:
    """Every file below ``root`` (bytes path) with its mode and bytes, ``.vaultd`` left out."""
    out: dict[bytes, tuple[int, bytes]] = {}
    base = os.fsencode(str(root))
    for folder, dirs, files in os.walk(base):
        rel_folder = os.path.relpath(folder, base)
        if rel_folder == b"." and b".vaultd" in dirs:
            dirs.remove(b".vaultd")
        for name in files:
            full = os.path.join(folder, name)
            st_ = os.lstat(full)
            rel = os.path.relpath(full, base)
            if stat.S_ISREG(st_.st_mode):
                with open(full, "rb") as fh:
                    out[rel] = (st_.st_mode, fh.read())
            else:
                out[rel] = (st_.st_mode, b"")
    return out


# -- one vault of hostile names --------------------------------------------------------------------


@dataclass
class NameVault:
    root: Path
    vid: str
    files: dict[bytes, str] = field(default_factory=dict)  #: rel -> its unique search word
    refused: Counter[str] = field(default_factory=Counter)  #: names the filesystem refused, by errno
    words: Iterator[int] = field(default_factory=lambda: iter(range(1, 10**9)))
    renamed_writes: list[tuple[str, list[str]]] = field(default_factory=list)  #: asked, written

    def add(self, rel: bytes) -> bool:
        word = f"qzname{next(self.words):06d}"
        if rel in self.files:
            return False
        if write_file(self.root, rel, f"# heading {word}\n\nbody {word} #nametag\n"):
            self.files[rel] = word
            return True
        self.refused["filesystem"] += 1
        return False

    def notes(self) -> dict[str, bytes]:
        """Path as replies carry it -> rel, for every file the index should list as a note: not
        vaultd's operation log (``log.md``, which the writes make), which no listing shows."""
        return {decode(rel): rel for rel in self.files if expect(rel).kind == "note" and rel != b"log.md"}

    def skips(self) -> dict[str, str]:
        """Shown path -> code, one per skipped file or top-most skipped folder."""
        out: dict[str, str] = {}
        for rel in self.files:
            e = expect(rel)
            if e.skip_path is not None:
                out[shown(e.skip_path)] = e.kind
        return out


def build_name_vault(root: Path, vid: str, names: Iterable[bytes], tally: NameTally) -> NameVault:
    """Every name at the root and inside each hostile folder, plus 256-byte names the disk refuses."""
    root.mkdir(parents=True)
    nv = NameVault(root, vid)
    names = list(names)
    for name in names:
        tally.counts["names.tried"] += 1
        nv.add(name)
    for _, folder in FOLDERS:
        for name in names[:: max(1, len(names) // 25)]:
            tally.counts["names.tried"] += 1
            nv.add(folder + b"/" + name)
    nv.add(FOLDERS[0][1] + b"/" + FOLDERS[4][1] + b"/" + b"-nested.md")
    for unit in ("a", "\u00e9", "\u20ac", "\U0001f600"):
        too_long = utf8(padded(unit, NAME_MAX + 1))
        if len(too_long) == NAME_MAX + 1:
            tally.counts["names.tried"] += 1
            try:
                fd = os.open(at_path(root, too_long), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                os.close(fd)
                tally.counts["names.256_accepted_by_fs"] += 1  # not ext4: then it is one more name
                nv.files[too_long] = "-"
            except OSError as exc:
                tally.counts[f"names.refused_by_fs.{errno.errorcode.get(exc.errno or 0, '?')}"] += 1
    tally.counts["names.files_written"] += len(nv.files)
    return nv
