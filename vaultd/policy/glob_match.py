"""Many path globs compiled into one regular expression, matched like :func:`~vaultd.policy.paths.matching_glob`.

``matching_glob`` runs a component-level dynamic program per glob, in Python: fine for a vault's
64 ``deny_paths`` on one write, far too slow for every subscription's globs on every event. A
:class:`GlobSet` answers the same question with one ``re.match`` over the whole set, in C.

The semantics are ``matching_glob``'s, exactly (a property test compares them): both sides are
taken to :func:`~vaultd.policy.paths.path_key`; a glob is split on ``/`` into components; ``*``,
``?`` and ``[...]`` stay inside one component and mean what :func:`fnmatch.fnmatchcase` makes of
them (bracket expressions are handed to :func:`fnmatch.translate` itself); ``**`` spans any
number of components, zero included; a glob matching a folder covers what is below it.

No glob can make matching blow up (the reason the dynamic program exists): the path is matched as
``"/" + key``, each component as ``/`` and a piece that cannot cross a ``/``. A ``*`` followed by
more of its component, and a ``**`` followed by more components, take the leftmost place where
what follows fits, inside an atomic group, and are never retried. Leftmost is always right: what
follows is of fixed width (in characters, or in components), and the next ``*`` or ``**`` (or,
for a ``**``, the end of the glob, as a folder match covers the rest) absorbs whatever lies
between. That is :func:`fnmatch.translate`'s own construction, one level up.
"""

from __future__ import annotations

import fnmatch
import re
from typing import TYPE_CHECKING, Final

from vaultd.policy.paths import path_key

if TYPE_CHECKING:
    from collections.abc import Iterable

_ONE: Final = "[^/]"  #: one character of a component
_END: Final = "(?=/|\\Z)"  #: a component ends here
_STAR: Final = object()


def _bracket(component: str, start: int) -> tuple[str, int]:
    """The regex of the bracket expression at ``component[start] == '['`` and the index after it,
    found as :func:`fnmatch.translate` finds it; an unclosed ``[`` is a literal."""
    j, n = start + 1, len(component)
    if j < n and component[j] == "!":
        j += 1
    if j < n and component[j] == "]":
        j += 1
    while j < n and component[j] != "]":
        j += 1
    if j >= n:
        return re.escape("["), start + 1
    translated = fnmatch.translate(component[start : j + 1])
    body = translated.removeprefix("(?s:").removesuffix(")\\Z")
    if body == ".":  # a negated empty set: any one character
        return _ONE, j + 1
    if body.startswith("["):  # a set, maybe negated: never the separator
        return f"(?!/){body}", j + 1
    return body, j + 1  # an empty set, matching nothing: ``(?!)``


def _component(component: str) -> str:
    """One glob component as a regex for one path component (it never matches a ``/``)."""
    tokens: list[object] = []
    i = 0
    while i < len(component):
        c = component[i]
        if c == "*":
            if not tokens or tokens[-1] is not _STAR:
                tokens.append(_STAR)
            i += 1
        elif c == "?":
            tokens.append(_ONE)
            i += 1
        elif c == "[":
            piece, i = _bracket(component, i)
            tokens.append(piece)
        else:
            tokens.append(re.escape(c))
            i += 1
    out: list[str] = []
    k = 0
    while k < len(tokens) and tokens[k] is not _STAR:
        out.append(str(tokens[k]))
        k += 1
    while k < len(tokens):
        k += 1  # the star
        fixed: list[str] = []
        while k < len(tokens) and tokens[k] is not _STAR:
            fixed.append(str(tokens[k]))
            k += 1
        if k == len(tokens):  # the last star: the rest of the component, then what is fixed after it
            out.append(f"{_ONE}*{''.join(fixed)}{_END}")
        else:
            out.append(f"(?>{_ONE}*?{''.join(fixed)})")
    return "".join(out)


def glob_regex(glob: str) -> str:
    """One glob as a regex matched at the start of ``"/" + path_key(path)``."""
    parts = path_key(glob).strip("/").split("/")
    out: list[str] = []
    chunk: list[str] = []
    spanning = False  #: a ``**`` waits for the chunk that follows it
    for part in parts:
        if part == "**":
            if chunk or not spanning:
                out.append(_close(chunk, spanning))
                chunk, spanning = [], True
            continue
        chunk.append(f"/{_component(part)}{_END}")
    out.append(_close(chunk, spanning))
    return "".join(out)


def _close(chunk: list[str], spanning: bool) -> str:
    body = "".join(chunk)
    if not spanning or not body:  # anchored where it stands; a trailing ``**`` adds nothing
        return body
    return f"(?>(?:/{_ONE}*)*?{body})"


class GlobSet:
    """Globs compiled once; :meth:`matches` is ``matching_glob(rel, globs) is not None``."""

    __slots__ = ("_pattern", "globs")

    def __init__(self, globs: Iterable[str]) -> None:
        self.globs = tuple(dict.fromkeys(globs))
        self._pattern = re.compile("|".join(f"(?:{glob_regex(g)})" for g in self.globs)) if self.globs else None

    def matches(self, rel: str) -> bool:
        return self._pattern is not None and self._pattern.match("/" + path_key(rel)) is not None
