"""How the vault's Obsidian writes links: ``.obsidian/app.json``'s ``newLinkFormat`` and
``useMarkdownLinks``, read so that a link vaultd writes reads like one the person's Obsidian wrote.

Obsidian's defaults apply when the file is absent, unreadable, not JSON, or holds a value it does
not know (Obsidian itself falls back the same way). Reading never writes, and ``.obsidian/`` stays
out of the index: only these two settings are read, bounded, when an operation needs them.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from vaultd.fsio import ReadRefused, read_regular
from vaultd.vault import json_text

if TYPE_CHECKING:
    from pathlib import Path

APP_JSON: Final = ".obsidian/app.json"
MAX_APP_JSON_BYTES: Final = 256 * 1024  #: Obsidian's own file is a few hundred bytes


class NewLinkFormat(enum.StrEnum):
    """Obsidian's "New link format" setting: what path a new link carries."""

    SHORTEST = "shortest"  #: the bare name when no other file has it, else the vault path
    RELATIVE = "relative"  #: the path relative to the note holding the link
    ABSOLUTE = "absolute"  #: the vault path


@dataclass(frozen=True, slots=True)
class LinkFormat:
    """The two settings; the defaults are Obsidian's."""

    new_link_format: NewLinkFormat = NewLinkFormat.SHORTEST
    markdown: bool = False  #: ``useMarkdownLinks``: ``[name](path.md)`` instead of ``[[name]]``


def parse_link_format(data: bytes) -> LinkFormat:
    """The settings in an ``app.json``'s bytes; Obsidian's defaults for anything unusable."""
    try:
        doc = json_text.load(data.decode("utf-8"))
    except ValueError:  # not UTF-8, not JSON, or nested past the bound
        return LinkFormat()
    return link_format_of(doc)


def link_format_of(doc: object) -> LinkFormat:
    """The settings in an ``app.json`` already decoded; Obsidian's defaults for anything unusable."""
    if not isinstance(doc, dict):
        return LinkFormat()
    raw_format = doc.get("newLinkFormat")
    try:
        new_format = NewLinkFormat(raw_format) if isinstance(raw_format, str) else NewLinkFormat.SHORTEST
    except ValueError:
        new_format = NewLinkFormat.SHORTEST
    markdown = doc.get("useMarkdownLinks")
    return LinkFormat(new_format, markdown if isinstance(markdown, bool) else False)


def read_link_format(root: Path) -> LinkFormat:
    """The vault's link settings now (never through a symlink to the file itself, bounded)."""
    try:
        data, _ = read_regular(root / APP_JSON, MAX_APP_JSON_BYTES)
    except (OSError, ReadRefused):
        return LinkFormat()
    return parse_link_format(data)
