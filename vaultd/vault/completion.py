"""Names that complete what a person typed: note names, top-level folders, and a folder's entries.

A shell asks at each Tab, so an answer is a binary search in a sorted table, not a scan. The table
is built from the index's paths once per index generation (sorting 100,000 names takes tens of
milliseconds, in a worker thread) and kept until the index changes.

Names compare as links do (NFC, case-folded), so ``alp`` completes ``Alpha Plan``. A name that two
notes share does not name one note, so each of them is offered by its path instead.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from vaultd.vault.link_targets import name_key

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator


@dataclass(frozen=True, slots=True)
class NameTable:
    """Every note path, sorted twice: by its folded name and by its folded path."""

    generation: int
    by_name: list[tuple[str, str]]  #: (folded name without .md, path)
    by_path: list[tuple[str, str]]  #: (folded path, path)


def build_table(generation: int, paths: Iterable[str]) -> NameTable:
    by_name, by_path = [], []
    for path in paths:
        stem = path.rpartition("/")[2]
        stem = stem[:-3] if stem.lower().endswith(".md") else stem
        by_name.append((name_key(stem), path))
        by_path.append((name_key(path), path))
    by_name.sort()
    by_path.sort()
    return NameTable(generation, by_name, by_path)


def _starting(rows: list[tuple[str, str]], folded: str) -> Iterator[tuple[str, str]]:
    for i in range(bisect.bisect_left(rows, (folded, "")), len(rows)):
        if not rows[i][0].startswith(folded):
            return
        yield rows[i]


def complete(table: NameTable, prefix: str, limit: int, hidden: Callable[[str], bool]) -> tuple[list[str], bool]:
    """The names starting with ``prefix`` (at most ``limit``, in folded order) and whether more exist.

    Without a '/', note names and top-level folders; a name shared by notes comes as their paths.
    With one, the entries of the folder typed so far: its notes by path and its folders.
    """
    if "/" in prefix:
        found = sorted(_in_folder(table, prefix, hidden), key=name_key)
        return found[:limit], len(found) > limit
    names: list[str] = []
    for _key, name in heapq.merge(_names(table, name_key(prefix), hidden), _top_folders(table, name_key(prefix), hidden)):
        if not names or names[-1] != name:
            names.append(name)
        if len(names) > limit:
            return names[:limit], True
    return names, False


def _names(table: NameTable, folded: str, hidden: Callable[[str], bool]) -> Iterator[tuple[str, str]]:
    """(folded name, name) for each name, or (folded name, path) for each note sharing one."""
    for key, group in itertools.groupby(_starting(table.by_name, folded), key=lambda row: row[0]):
        paths = [path for _key, path in group if not hidden(path)]
        if len(paths) == 1:
            stem = paths[0].rpartition("/")[2]
            yield key, stem[:-3] if stem.lower().endswith(".md") else stem
        else:
            yield from ((key, path) for path in paths)


def _top_folders(table: NameTable, folded: str, hidden: Callable[[str], bool]) -> Iterator[tuple[str, str]]:
    """(folded folder, ``folder/``) for each top-level folder starting with ``folded``."""
    rows = table.by_path
    i = bisect.bisect_left(rows, (folded, ""))
    while i < len(rows) and rows[i][0].startswith(folded):
        key, path = rows[i]
        top, slash, _ = path.partition("/")
        if not slash:
            i += 1
            continue
        folded_top = key.partition("/")[0]
        after = bisect.bisect_left(rows, (folded_top + "0", ""), i)  # "0" sorts right after "/"
        if any(not hidden(p) for _k, p in rows[i:after]):
            yield folded_top, top + "/"
        i = after


def _in_folder(table: NameTable, prefix: str, hidden: Callable[[str], bool]) -> set[str]:
    depth = prefix.count("/")  # the folder is the path's first ``depth`` parts, however folding changed their length
    found: set[str] = set()
    for _key, path in _starting(table.by_path, name_key(prefix)):
        if hidden(path):
            continue
        parts = path.split("/")
        found.add("/".join(parts[: depth + 1]) + "/" if len(parts) > depth + 1 else path)
    return found
