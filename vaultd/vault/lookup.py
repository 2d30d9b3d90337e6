"""Finding the one note a caller means: by path, by name, or by an alias naming exactly one note.

Strict on purpose (writes use it too): never a fuzzy match, and a name two notes share is
refused with the candidates instead of silently picking one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vaultd.errors import Ambiguous, InvalidParams, NotFound
from vaultd.vault.link_targets import ResolutionStatus, name_key
from vaultd.vault.walk import is_note_path

if TYPE_CHECKING:
    from collections.abc import Callable, Container

    from vaultd.vault.index import IndexCopy, VaultIndex


def _never(_path: str) -> bool:
    return False


def _tidied(target: str) -> str:
    return target.strip().lstrip("/").removeprefix("./")


def exact_path(notes: Container[str], target: str, hidden: Callable[[str], bool] = _never) -> str | None:
    """The note whose path ``target`` is (with or without ``.md``, as typed or tidied), or None:
    the first step of :func:`find_note`, which needs the notes alone, not the name maps.

    The exact path comes first: a file name may begin or end in any character, whitespace and
    controls included, and the tidied form may be another note's path.
    """
    wanted = _tidied(target)
    for exact in dict.fromkeys((target, target + ".md", wanted, wanted + ".md")):
        if exact in notes and not hidden(exact):
            return exact
    return None


def find_note(index: VaultIndex | IndexCopy, target: str, hidden: Callable[[str], bool] = _never) -> str:
    """The vault-relative path of the note ``target`` names.

    ``hidden`` paths (private to the caller) are treated as absent: they are never returned, never
    named among candidates, and a target naming only them is NOT_FOUND like any unknown name.

    Raises:
        NotFound: NOT_FOUND, nothing matches (or only an attachment does).
        Ambiguous: AMBIGUOUS, several notes match; ``candidates`` lists them.
        InvalidParams: INVALID_PARAMS, the target holds a NUL byte.
    """
    if "\x00" in target:
        raise InvalidParams("the target contains a NUL byte")
    exact = exact_path(index.notes, target, hidden)
    if exact is not None:
        return exact
    wanted = _tidied(target)
    res = index.resolver.resolve(wanted, "")
    if res.status == ResolutionStatus.RESOLVED and res.path is not None and not hidden(res.path):
        if is_note_path(res.path) and res.path in index.notes:
            return res.path
        if res.path in index.attachments:
            raise NotFound(f"{res.path} is a file, not a note; use the file methods (vaultctl file read|move|rename|delete)")
    if res.status == ResolutionStatus.AMBIGUOUS:
        candidates = [c for c in res.candidates if not hidden(c)]
        if len(candidates) == 1 and candidates[0] in index.notes:
            return candidates[0]
        if len(candidates) > 1:
            raise Ambiguous(
                f"{target!r} names {len(candidates)} notes; give the path of the one you mean",
                candidates=candidates,
            )
    by_alias = [p for p in index.notes_by_alias(wanted) if not hidden(p)]
    if len(by_alias) == 1:
        return by_alias[0]
    if len(by_alias) > 1:
        raise Ambiguous(f"the alias {target!r} names {len(by_alias)} notes; give a path", candidates=by_alias)
    folded = name_key(wanted)
    if any(k in index.skipped and not hidden(index.skipped[k].path) for k in (folded, folded + ".md")):
        raise NotFound(f"{target!r} is not indexed; see 'vaultctl issues'")
    raise NotFound(f"no note {target!r}; try 'vaultctl search'")
