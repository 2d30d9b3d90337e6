"""What the parsers extract from one note: the shared vocabulary of the scanner, the resolver and
the index.

These Structs are also the on-disk form of the index cache (msgpack), so a warm restart decodes
them instead of re-parsing every note. Change a field and bump ``RECORD_VERSION``.
"""

from __future__ import annotations

import enum
from typing import Any

import msgspec

RECORD_VERSION = 2


class LinkKind(enum.StrEnum):
    WIKI = "wiki"  #: ``[[t]]``
    EMBED = "embed"  #: ``![[t]]``
    MARKDOWN = "markdown"  #: ``[x](Note.md)``
    FRONTMATTER = "frontmatter"  #: ``"[[t]]"`` inside a frontmatter value


class Heading(msgspec.Struct, array_like=True):
    level: int  #: 1..6
    text: str  #: as written, trimmed, without the ``#`` marks or trailing closing hashes
    line: int  #: 1-based line in the whole file


class Block(msgspec.Struct, array_like=True):
    id: str  #: without the caret
    line: int


class Link(msgspec.Struct, array_like=True):
    kind: LinkKind
    target: str  #: the path part as written (unescaped, percent-decoded for Markdown links); "" for ``[[#H]]``
    anchor: str | None  #: ``"H1#H2"`` for headings, ``"^id"`` for blocks, None when absent
    label: str | None  #: the ``|label`` (or the Markdown link text); for embeds like ``|300`` the raw suffix
    line: int  #: 1-based line in the whole file
    start: int  #: character offset of the link's first character (``!`` or ``[``) in the whole file text
    end: int  #: character offset just past the link


class Tag(msgspec.Struct, array_like=True):
    name: str  #: without ``#``, as written (case kept); nested tags keep their slashes
    line: int  #: 0 for frontmatter tags


class Task(msgspec.Struct, array_like=True):
    """One checklist item (see :mod:`vaultd.vault.task_line`); dates ``YYYY-MM-DD`` or None."""

    line: int  #: 1-based line in the whole file
    status: str  #: the character between the brackets
    text: str  #: the item's text as written, after the checkbox
    heading: str | None  #: the heading it sits under, None above the first
    due: str | None = None
    scheduled: str | None = None
    start: str | None = None
    created: str | None = None
    done: str | None = None
    cancelled: str | None = None
    priority: str | None = None
    recurrence: str | None = None
    tags: tuple[str, ...] = ()


class NoteIssue(msgspec.Struct, array_like=True):
    code: str  #: stable, e.g. ``N01`` malformed frontmatter
    message: str
    line: int | None = None


class MarkdownScan(msgspec.Struct):
    """The result of scanning a note body."""

    headings: list[Heading]
    blocks: list[Block]
    links: list[Link]
    tags: list[Tag]
    words: int
    tasks: list[Task] = []
    characters: int = 0  #: body characters, line breaks left out


class NoteRecord(msgspec.Struct, kw_only=True):
    """Everything the index keeps about one note; the body itself stays on disk and in FTS."""

    path: str  #: vault-relative, POSIX separators, the on-disk bytes' str (not normalized)
    size: int
    mtime_ns: int
    ino: int
    sha256: str
    title: str
    frontmatter: dict[str, Any] | None  #: JSON-compatible data; None when absent or unparseable
    aliases: list[str]
    tags: list[Tag]  #: inline and frontmatter tags
    headings: list[Heading]
    blocks: list[Block]
    links: list[Link]
    issues: list[NoteIssue]
    words: int
    body_offset: int  #: character offset where the body starts (after the frontmatter block)
    tasks: list[Task] = []  #: checklist items in line order
    characters: int = 0  #: body characters as Obsidian counts them (line breaks left out)
