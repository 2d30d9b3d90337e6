"""Finding the one note a caller means: by path, by name, or by an alias naming exactly one note.

Strict on purpose (writes use it too): never a fuzzy match, and a name two notes share is
refused with the candidates instead of silently picking one.
"""

from __future__ import annotations

from vaultd.errors import Ambiguous, InvalidParams, NotFound
from vaultd.vault.index import VaultIndex
from vaultd.vault.resolve import ResolutionStatus, name_key
from vaultd.vault.walk import is_note_path


def find_note(index: VaultIndex, target: str) -> str:
    """The vault-relative path of the note ``target`` names.

    Raises:
        NotFound: NOT_FOUND, nothing matches (or only an attachment does).
        Ambiguous: AMBIGUOUS, several notes match; ``candidates`` lists them.
    """
    if "\x00" in target:
        raise InvalidParams("the target contains a NUL byte")
    wanted = target.strip().lstrip("/").removeprefix("./")
    if wanted in index.notes:
        return wanted
    if wanted + ".md" in index.notes:
        return wanted + ".md"
    res = index.resolver.resolve(wanted, "")
    if res.status == ResolutionStatus.RESOLVED and res.path is not None:
        if is_note_path(res.path) and res.path in index.notes:
            return res.path
        if res.path in index.attachments:
            raise NotFound(f"{res.path} is an attachment, not a note")
    if res.status == ResolutionStatus.AMBIGUOUS:
        raise Ambiguous(
            f"{target!r} names {len(res.candidates)} notes; give the path of the one you mean",
            candidates=res.candidates,
        )
    by_alias = index.notes_by_alias(wanted)
    if len(by_alias) == 1:
        return by_alias[0]
    if len(by_alias) > 1:
        raise Ambiguous(f"the alias {target!r} names {len(by_alias)} notes; give a path", candidates=by_alias)
    folded = name_key(wanted)
    if folded in index.skipped or (folded + ".md") in index.skipped:
        raise NotFound(f"{target!r} is not indexed; see 'vaultctl issues'")
    raise NotFound(f"no note {target!r}; try 'vaultctl search'")
