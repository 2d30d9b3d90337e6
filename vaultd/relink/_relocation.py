"""The vault before and after files move, where each link must point then, and the text that
names its file in the style the link was written in.

A :class:`Relocation` describes the vault after some files move (``moved``: old path to new path,
or None for a file that goes away) and where links should point (``repoint``: a move repoints
each moved file to its new place; a merge repoints ``absorb`` to ``keep``). It resolves targets
against the vault as it is (``before``) and as the change leaves it (``after``) without copying
the index: every lookup a target can make (by name, by path, by path suffix) only ever returns
files whose link name equals the target's last component, so the after-state of one target is a
tiny resolver over just those files, with the moved ones swapped.

The rule, applied to every link that could be affected: a link that resolved to ``P`` before
must resolve to ``repoint[P]`` (or ``P``) after. One that still does keeps its bytes (a folder
move leaves ``[[Name]]`` alone, as Obsidian does); one that would not is rewritten, keeping the
way its author wrote it, whatever kind it is (wiki-link, embed, frontmatter link, Markdown link,
a link in a canvas or a base; :func:`styled_target`):

- **rooted** (``/folder/Note``): the vault path with its leading ``/``;
- **relative** (``./x``, ``../x``, or a folder path that named its file from the linking note's
  folder): the path relative to where the linking file is after the change, ``./`` or ``../``
  first;
- **path** (``folder/Note``, from the vault root or a unique path suffix): the full vault path,
  so a path-qualified link stays path-qualified (a note moved to the root is named by its bare
  name when that is unique, else ``/Name``);
- **name** (``Note``): the bare name when no other file has it after the change, else what the
  vault's Obsidian would write for a new link (``.obsidian/app.json``'s ``newLinkFormat``:
  the vault path for ``shortest`` and ``absolute``, the relative path for ``relative``).

``.md`` stays when the link carried it and is never added. The anchor, label and every other byte
of the link are the caller's to keep.

A link vaultd writes anew (:func:`new_link`) is what the vault's Obsidian would write: a
wiki-link, or with ``useMarkdownLinks`` a Markdown link with its path percent-encoded, its path
per ``newLinkFormat``.
"""

from __future__ import annotations

import enum
import posixpath
from typing import TYPE_CHECKING
from urllib.parse import quote

from protocol.errors import Issue
from protocol.issue_codes import IssueCode
from vaultd.errors import ValidationFailed
from vaultd.vault.app_config import LinkFormat, NewLinkFormat
from vaultd.vault.link_targets import LinkResolver, Resolution, ResolutionStatus, name_key

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

__all__ = ["Relocation", "link_name", "link_path", "link_text_for", "new_link", "property_link", "styled_target"]

_URI_SAFE = "/!$&'*+,;=:@~-._"  #: left as they are in a Markdown link's path; the rest percent-encoded


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
        created: Iterable[str] = (),
    ) -> None:
        self.base = resolver
        self.moved = dict(moved)
        self.repoint = {old: new for old, new in moved.items() if new is not None} | dict(repoint or {})
        self.fmt = fmt or LinkFormat()
        #: the files the after-state holds that the index does not yet: each moved file's new
        #: place, and each file the same operation creates (a link to one counts it when it asks
        #: whether a name is unique)
        self._added = [new for new in moved.values() if new is not None] + [p for p in created if p not in resolver]
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


# -- the style a link was written in ------------------------------------------------------------


class Style(enum.Enum):
    ROOTED = "rooted"
    RELATIVE = "relative"
    PATH = "path"
    NAME = "name"


def _same_file(a: str, b: str) -> bool:
    return name_key(a).removesuffix(".md") == name_key(b).removesuffix(".md")


def style_of(target: str, source: str, was: str) -> Style:
    """How ``target`` (the path part of a link in ``source``) named ``was``, the file it resolved to."""
    if target.startswith("/"):
        return Style.ROOTED
    if target.startswith(("./", "../")):
        return Style.RELATIVE
    if "/" not in target:
        return Style.NAME
    if _same_file(posixpath.normpath(target), was):
        return Style.PATH
    if _same_file(posixpath.normpath(posixpath.join(posixpath.dirname(source), target)), was):
        return Style.RELATIVE
    return Style.PATH  # a unique path suffix: written from the vault's side, so the vault path


def styled_target(target: str, source: str, was: str, want: str, reloc: Relocation) -> str:
    """The text naming ``want`` in the style ``target`` had; ``source`` is where the link is now."""
    new_source = reloc.new_source(source)
    style = style_of(target, source, was)
    if style is Style.ROOTED:
        text = "/" + link_path(want)
    elif style is Style.RELATIVE:
        text = link_path(relative_path(want, new_source))
    elif style is Style.PATH:
        text = link_path(want) if "/" in want else reloc.link_text(want)
    elif reloc.named(link_name(want)) == [want]:
        text = link_name(want)
    else:
        text = reloc.format_text(want, new_source)
    if _is_note(want) and target.lower().endswith(".md"):
        text += ".md"
    return text


def new_link(reloc: Relocation, path: str, source: str, *, embed: bool = False) -> str:
    """A new link to ``path`` written in ``source``, as the vault's Obsidian settings write one;
    an ``embed`` (``![[...]]``) is, in Markdown format, ``![](path)`` with no alt text, as
    Obsidian writes an attachment it embeds."""
    text = reloc.format_text(path, source)
    if not reloc.fmt.markdown:
        return f"{'!' if embed else ''}[[{text}]]"
    dest = quote(text + (".md" if _is_note(path) else ""), safe=_URI_SAFE)
    if embed:
        return f"![]({dest})"
    label = link_name(path).replace("[", "\\[").replace("]", "\\]")
    return f"[{label}]({dest})"


def property_link(reloc: Relocation, path: str, source: str) -> str:
    """A new link to ``path`` in a frontmatter property of ``source``: a wiki-link whatever
    ``useMarkdownLinks`` says (Obsidian's properties know no other), its path per ``newLinkFormat``."""
    return f"[[{reloc.format_text(path, source)}]]"
