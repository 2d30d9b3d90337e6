"""The vault before and after files move, and the link text that names a file afterwards.

A :class:`Relocation` describes the vault after some files move (``moved``: old path to new path,
or None for a file that goes away) and where links should point (``repoint``: a move repoints
each moved file to its new place; a merge repoints ``absorb`` to ``keep``). It resolves targets
against the vault as it is (``before``) and as the change leaves it (``after``) without copying
the index: every lookup a target can make (by name, by path, by path suffix) only ever returns
files whose link name equals the target's last component, so the after-state of one target is a
tiny resolver over just those files, with the moved ones swapped.

The rule, applied to every link that could be affected: a link that resolved to ``P`` before
must resolve to ``repoint[P]`` (or ``P``) after. One that still does keeps its bytes (a folder
move leaves ``[[Name]]`` alone, as Obsidian does); one that would not is rewritten, in the style
it was written in (:mod:`vaultd.ops.link_style`).
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING

from protocol.errors import Issue
from protocol.issue_codes import IssueCode
from vaultd.errors import ValidationFailed
from vaultd.vault.app_config import LinkFormat, NewLinkFormat
from vaultd.vault.link_targets import LinkResolver, Resolution, ResolutionStatus, name_key

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["Relocation", "link_name", "link_path", "link_text_for"]


def _is_note(path: str) -> bool:
    return path[-3:].lower() == ".md"


def _name_key(name: str) -> str:
    """A link name as the resolver compares it: NFC, case-folded, without ``.md``."""
    key = name_key(name)
    return key[:-3] if key.endswith(".md") else key


def link_name(path: str) -> str:
    """The name a bare link uses: the stem of a note, the whole file name of an attachment."""
    name = path.rpartition("/")[2]
    return name[:-3] if _is_note(path) else name


def link_path(path: str) -> str:
    """The vault path a link uses: ``.md`` dropped for notes."""
    return path[:-3] if _is_note(path) else path


def relative_path(want: str, source: str) -> str:
    """``want`` relative to the folder of ``source``, starting ``./`` or ``../``: without the
    prefix a path reads as vault-relative first (or as a bare name)."""
    path = posixpath.relpath(want, posixpath.dirname(source) or ".")
    return path if path.startswith("../") else "./" + path


def link_text_for(resolver: LinkResolver, path: str) -> str:
    """The shortest text that names ``path`` unambiguously in the vault as it is."""
    return Relocation(resolver, {}).link_text(path)


class Relocation:
    """The vault before and after files move, and where links should point afterwards."""

    def __init__(
        self,
        resolver: LinkResolver,
        moved: Mapping[str, str | None],
        repoint: Mapping[str, str] | None = None,
        fmt: LinkFormat | None = None,
    ) -> None:
        self.base = resolver
        self.moved = dict(moved)
        self.repoint = {old: new for old, new in moved.items() if new is not None} | dict(repoint or {})
        self.fmt = fmt or LinkFormat()
        self._added = [new for new in moved.values() if new is not None]
        #: the names whose resolution the change can alter: those of the files that move
        self._names = {_name_key(link_name(p)) for p in (*self.moved, *self._added)}

    def new_source(self, source: str) -> str:
        return self.moved.get(source) or source

    def before(self, target: str, source: str) -> Resolution:
        return self.base.resolve(target, source)

    def named(self, name: str) -> list[str]:
        """The files the after-state holds under one link name (note stem or attachment name)."""
        if not name.strip() or "/" in name:
            return []
        res = self.base.resolve(name, "")
        found = ({res.path} if res.path else set(res.candidates)) - self.moved.keys()
        found |= {new for new in self._added if LinkResolver([new]).resolve(name, "").path == new}
        return sorted(found)

    def after(self, target: str, source: str) -> Resolution:
        """What ``target`` written in ``source`` (its after-state path) resolves to after the change."""
        target = target.strip()
        if not target:
            return Resolution(ResolutionStatus.RESOLVED, source, reason="a link to the note itself")
        rel = target.lstrip("/")
        names = {
            posixpath.normpath(rel).rpartition("/")[2],
            posixpath.normpath(posixpath.join(posixpath.dirname(source), rel)).rpartition("/")[2],
        }
        files = {p for name in names for p in self.named(name)}
        return LinkResolver(sorted(files)).resolve(target, source)

    def link_text(self, path: str) -> str:
        """The shortest text that names ``path`` unambiguously after the change."""
        name = link_name(path)
        if self.named(name) == [path]:
            return name
        return self.vault_path_text(path)

    @staticmethod
    def vault_path_text(path: str) -> str:
        """The vault path of ``path`` as a link writes it: a note at the root shares its path with
        its bare name, so there the leading '/' says "the root"."""
        return link_path(path) if "/" in path else "/" + link_path(path)

    def format_text(self, path: str, source: str) -> str:
        """The text Obsidian's "New link format" gives a new link to ``path`` in ``source``
        (its after-state path): what a link without a style of its own gets."""
        if self.fmt.new_link_format is NewLinkFormat.RELATIVE:
            return link_path(relative_path(path, source))
        if self.fmt.new_link_format is NewLinkFormat.ABSOLUTE:
            return self.vault_path_text(path)
        return self.link_text(path)

    def wanted(self, target: str, source: str) -> tuple[str, str] | None:
        """(what the link named before, what it must name after) when the link needs rewriting."""
        if not target.strip():
            return None
        was = self.before(target, source)
        if was.status != ResolutionStatus.RESOLVED or was.path is None:
            return None  # missing or ambiguous links stay as written
        if was.path in self.moved and self.moved[was.path] is None:
            return None  # its file goes away; a delete reports these, it does not rewrite them
        want = self.repoint.get(was.path, was.path)
        if want == was.path and source not in self.moved and self._unaffected(target):
            return None  # a name no moving file has: it resolves after exactly as before
        now = self.after(target, self.new_source(source))
        if now.status == ResolutionStatus.RESOLVED and now.path == want:
            return None
        return was.path, want

    def _unaffected(self, target: str) -> bool:
        """Whether no file the change moves can have ``target``'s name: every lookup a target makes
        returns only files of that name (see :meth:`after`), so its resolution cannot change."""
        last = target.strip().rpartition("/")[2]
        if last in ("", ".", ".."):
            return False  # a path whose name normalizing decides: judged the long way
        return _name_key(last) not in self._names

    def check_link(self, target: str, source: str, want: str, written: str, line: int) -> None:
        """A rewritten link must resolve, after the move, to the file it meant.

        Raises:
            ValidationFailed: VALIDATION (V03), no link can name ``want`` unambiguously from the
                source.
        """
        now = self.after(target, self.new_source(source))
        if now.path != want:
            raise ValidationFailed(
                f"cannot write a link to {want} that resolves unambiguously from {self.new_source(source)}",
                issues=[
                    Issue(code=IssueCode.V03, path=source, line=line, message=f"{written} cannot be rewritten to name {want} unambiguously")
                ],
            )
