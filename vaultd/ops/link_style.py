"""The style a link was written in, and the text that names its new target in that style.

A rewritten link keeps the way its author wrote it, whatever kind it is (wiki-link, embed,
frontmatter link, Markdown link, a link in a canvas or a base):

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
from urllib.parse import quote

from vaultd.ops.relocation import Relocation, link_name, link_path, relative_path
from vaultd.vault.link_targets import name_key

_URI_SAFE = "/!$&'*+,;=:@~-._"  #: left as they are in a Markdown link's path; the rest percent-encoded


class Style(enum.Enum):
    ROOTED = "rooted"
    RELATIVE = "relative"
    PATH = "path"
    NAME = "name"


def _is_note(path: str) -> bool:
    return path[-3:].lower() == ".md"


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


def new_link(reloc: Relocation, path: str, source: str) -> str:
    """A new link to ``path`` written in ``source``, as the vault's Obsidian settings write one."""
    text = reloc.format_text(path, source)
    if not reloc.fmt.markdown:
        return f"[[{text}]]"
    dest = quote(text + (".md" if _is_note(path) else ""), safe=_URI_SAFE)
    label = link_name(path).replace("[", "\\[").replace("]", "\\]")
    return f"[{label}]({dest})"
