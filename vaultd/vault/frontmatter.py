"""Find and read a note's frontmatter header; pure functions, str in, data out.

A header follows Obsidian's rule: the file starts (after an optional UTF-8 BOM) with a line that
is exactly ``---`` (trailing spaces or tabs allowed) and ends at the next such line; only ``---``
closes it, never ``...``. LF and CRLF both count as line ends.

A flat header (one ``key: value`` a line, the usual case) is read line by line
(:mod:`.frontmatter_flat`); any other is read as YAML (:mod:`.frontmatter_yaml`: libyaml's fast
path, ruamel.yaml's careful one), imported at the first header that needs it, so a vault whose
headers are all flat, or a warm start that parses no note, never loads the YAML libraries.
Writing a header back, byte for byte except the keys that change, is :mod:`.frontmatter_emit`.
"""

from __future__ import annotations

import re
from typing import Any, Final, NamedTuple

import msgspec

from protocol.issue_codes import IssueCode
from vaultd.vault.frontmatter_flat import load_flat
from vaultd.vault.model import NoteIssue

MAX_HEADER_BYTES: Final = 64 * 1024  #: a bigger header is refused (N05) without being parsed

_OPEN = re.compile(r"\ufeff?---[ \t]*(\r?\n)")
_CLOSE = re.compile(r"^---[ \t]*(?:\r?\n|\r?\Z)", re.MULTILINE)


class FrontmatterParse(msgspec.Struct, frozen=True):
    """What :func:`parse` found at the top of a note."""

    data: dict[str, Any] | None  #: JSON-compatible; None when absent or unreadable
    present: bool  #: a closed header block exists (even an empty or unreadable one)
    body_offset: int  #: character offset of the body: past the closing fence line, or past the BOM
    body_line: int  #: 1-based line of the file where the body starts
    issues: list[NoteIssue]


class HeaderBounds(NamedTuple):
    """Where the header sits in the note text (character offsets)."""

    start: int  #: first character of the header text, just past the opening fence line
    end: int  #: start of the closing fence line; ``text[start:end]`` is the YAML
    body_offset: int  #: just past the closing fence line (== ``len(text)`` at end of file)
    newline: str  #: the opening fence's line ending, ``"\n"`` or ``"\r\n"``
    closed: bool  #: False when no closing fence follows (then ``end == body_offset == len(text)``)


def find_header(text: str) -> HeaderBounds | None:
    """Locate the header by Obsidian's rule, or None when the note has no opening fence."""
    opened = _OPEN.match(text)
    if opened is None:
        return None
    start = opened.end()
    closing = _CLOSE.search(text, start)
    if closing is None:
        return HeaderBounds(start, len(text), len(text), opened.group(1), closed=False)
    return HeaderBounds(start, closing.start(), closing.end(), opened.group(1), closed=True)


def split(text: str) -> tuple[str | None, int]:
    """Return the header's YAML text (None without a closed header) and the body's offset."""
    bounds = find_header(text)
    if bounds is None or not bounds.closed:
        return None, 1 if text.startswith("\ufeff") else 0
    return text[bounds.start : bounds.end], bounds.body_offset


def body_start(text: str) -> tuple[int, int]:
    """Where the body starts (character offset, 1-based line), as :func:`parse` says, without
    reading the YAML: for a caller that only needs the body (a link rewrite of many notes)."""
    bounds = find_header(text)
    if bounds is None or not bounds.closed:
        return (1 if text.startswith("\ufeff") else 0), 1
    return bounds.body_offset, text.count("\n", 0, bounds.body_offset) + 1


def parse(text: str) -> FrontmatterParse:
    """Read a note's header. Never raises: a bad header gives ``data=None`` and an issue.

    An unterminated header is no header at all (as in Obsidian), so its body starts at the top.
    """
    bom = 1 if text.startswith("\ufeff") else 0
    bounds = find_header(text)
    if bounds is None:
        return FrontmatterParse(None, False, bom, 1, [])
    if not bounds.closed:
        issue = NoteIssue(IssueCode.N06, "the frontmatter header has no closing '---' line", 1)
        return FrontmatterParse(None, False, bom, 1, [issue])
    body_line = text.count("\n", 0, bounds.body_offset) + 1
    header = text[bounds.start : bounds.end]
    if len(header) * 4 > MAX_HEADER_BYTES and len(header.encode("utf-8", "surrogatepass")) > MAX_HEADER_BYTES:
        issue = NoteIssue(IssueCode.N05, f"the frontmatter header is over {MAX_HEADER_BYTES // 1024} KiB", 1)
        return FrontmatterParse(None, True, bounds.body_offset, body_line, [issue])
    data, issues = load_header(header, first_line=2)
    return FrontmatterParse(data, True, bounds.body_offset, body_line, issues)


def load_header(header: str, first_line: int = 1) -> tuple[dict[str, Any] | None, list[NoteIssue]]:
    """Turn header YAML into data: a flat header line by line (:mod:`.frontmatter_flat`), else
    as YAML (:func:`.frontmatter_yaml.load_yaml`: the fast path, else the careful one).

    Args:
        header: the YAML between the fences.
        first_line: the file line of the header's first line, for issue line numbers.
    """
    flat = load_flat(header)
    if flat is not None:
        return flat, []
    from vaultd.vault import frontmatter_yaml  # the YAML libraries, loaded at the first header that is not flat

    return frontmatter_yaml.load_yaml(header, first_line)
