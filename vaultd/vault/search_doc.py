"""What search needs of a note beyond its record, as the parser makes it.

Its own module, apart from the cache that stores it, so a parsing process (``parse_worker``)
imports the parser and this, not the cache's SQLite machinery and its log.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

if TYPE_CHECKING:
    from vaultd.vault.model import NoteRecord


class SearchDoc(msgspec.Struct, kw_only=True):
    """What search needs of a note beyond its record: its text and its filter fields."""

    title: str
    aliases: list[str] = []
    description: str = ""
    body: str = ""
    type: str | None = None
    domain: str | None = None
    folder: str | None = None  #: vault-relative folder; None derives it from the record's path
    tags: list[str] = []  #: tag names as written (``#`` optional); matched lowercased, with parents
    body_line: int = 1  #: the file line the body starts on (after the frontmatter), for passages' line ranges

    @classmethod
    def from_note(cls, record: NoteRecord, text: str) -> SearchDoc:
        """Build the usual document: frontmatter ``type``/``domain``/``description`` when strings."""
        fm = record.frontmatter or {}

        def scalar(key: str) -> str | None:
            value = fm.get(key)
            return value if isinstance(value, str) else None

        return cls(
            title=record.title,
            aliases=list(record.aliases),
            description=scalar("description") or "",
            body=text[record.body_offset :],
            type=scalar("type"),
            domain=scalar("domain"),
            tags=[t.name for t in record.tags],
            body_line=text.count("\n", 0, record.body_offset) + 1,
        )
