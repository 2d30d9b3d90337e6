"""Groups of paths held as small as they usually are: one path alone, a few in a tuple, more in a
list, very many in a set.

The index's name maps (a link name to the notes linking to it, an alias to its notes, a file
name to its files) hold a group of paths per key, and most groups hold one path: at 10,000
generated notes, 4,728 of 10,338 link names have one linking note and 9,980 of 10,000 file
names one file. A set per key cost 6 MB of the index's 29 MB of Python heap there, a list per
key 2 MB more; the path alone costs nothing beyond its map entry, as the path string is the one
the note table holds.

A group is a value, replaced when it changes (:func:`added`, :func:`removed` answer the new
one), except a list or a set, which only an unordered map holds (``ordered=False``) and which is
changed in place: an unordered map is never shared with a copy. A group past :data:`SMALL` paths
becomes a list (a change costs a scan of at most :data:`LARGE` pointers, not a copy of a tuple),
and past :data:`LARGE` a set, so a note that thousands of notes link to costs a set operation a
change. A set of 17 paths took 2.2 KB against 0.2 KB as a list: at 10,000 generated notes, 650
link names have more than 16 linking notes, 1.4 MB of the backlink map as sets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Collection

SMALL: Final = 16  #: the most paths an unordered group holds in a tuple
LARGE: Final = 256  #: the most paths an unordered group holds in a list

PathBag = str | tuple[str, ...] | list[str] | set[str]


def members(bag: PathBag | None) -> Collection[str]:
    """The paths of a group (none for None); a tuple keeps the order they were added in."""
    if bag is None:
        return ()
    if isinstance(bag, str):
        return (bag,)
    return bag


def added(bag: PathBag | None, path: str, *, ordered: bool) -> PathBag:
    """The group with ``path`` in it (once); ``ordered`` keeps the order of adding (a tuple,
    never a set)."""
    if bag is None:
        return path
    if isinstance(bag, str):
        return bag if bag == path else (bag, path)
    if isinstance(bag, tuple):
        if path in bag:
            return bag
        if ordered or len(bag) < SMALL:
            return (*bag, path)
        return [*bag, path]
    if isinstance(bag, list):
        if path in bag:
            return bag
        if len(bag) < LARGE:
            bag.append(path)
            return bag
        return {*bag, path}
    bag.add(path)
    return bag


def removed(bag: PathBag | None, path: str) -> PathBag | None:
    """The group without ``path``; None when nothing is left."""
    if bag is None or isinstance(bag, str):
        return None if bag == path else bag
    if isinstance(bag, tuple):
        rest = tuple(p for p in bag if p != path)
        return None if not rest else rest[0] if len(rest) == 1 else rest
    if isinstance(bag, list):
        if path in bag:
            bag.remove(path)
        return bag or None
    bag.discard(path)
    return bag or None
