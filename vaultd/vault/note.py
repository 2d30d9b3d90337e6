"""From a note file's bytes to its index record and search document, in one pure function.

Combines the frontmatter parser and the Markdown scanner, and decides what the index calls a
note's title, aliases and tags: the frontmatter ``title`` when it is a string, else the first H1,
else the file name; ``aliases`` (or the legacy ``alias``) as a string or a list of strings;
frontmatter ``tags`` (string, comma/space separated string, or list) plus inline tags.

vaultd's own operation log is a file of the vault but not one of the user's notes: search, stats,
tags and lint leave it out (``note.list`` lists it as a file), and ``log.tail`` and ``log.grep``
read its lines. So it is indexed by its header alone (a link target with its title; no body, links
or tags), read from the file's first bytes whatever its length: an append, which every write makes,
costs the same after ten lines as after a million, and a log past the note bound stays indexed. Its
record's ``sha256`` is therefore of its header and its status (size, mtime), not of its lines (see
:func:`log_note`).
"""

from __future__ import annotations

import hashlib
from typing import Any

from protocol.issue_codes import IssueCode
from protocol.limits import MAX_NOTE_BYTES as MAX_NOTE_BYTES  # larger notes are skipped and reported, never indexed
from vaultd.vault import frontmatter, markdown
from vaultd.vault.layout import LOG_HEADER, is_operation_log
from vaultd.vault.model import Link, NoteIssue, NoteRecord, Tag
from vaultd.vault.search_doc import SearchDoc


class Skipped(Exception):
    """The file is not indexed; the reason is reported by ``vault.issues``."""

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str) and v.strip()]
    return []


def _frontmatter_tags(value: Any) -> list[str]:
    if isinstance(value, str):
        value = value.replace(",", " ").split()
    return [t.strip().lstrip("#") for t in _strings(value) if t.strip().lstrip("#")]


def _frontmatter_links(data: dict[str, Any], body_line: int) -> list[Link]:
    """Wiki-links written inside frontmatter string values (``related: "[[x]]"``)."""
    found: list[Link] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            if "[[" in value:
                found.extend(markdown.links_in_value(value, 1))
        elif isinstance(value, list):
            for v in value:
                walk(v)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)

    walk(data)
    return found


def stem_of(path: str) -> str:
    name = path.rpartition("/")[2]
    return name[:-3] if name[-3:].lower() == ".md" else name


def too_big(size: int | None) -> Skipped:
    """The refusal of a note over the limit (``size`` None: it grew past the limit while read)."""
    shown = f"{size} bytes" if size is not None else "it grew while read"
    return Skipped(IssueCode.S01, f"over the {MAX_NOTE_BYTES // (1024 * 1024)} MiB note limit ({shown})")


def log_note(path: str, *, size: int, mtime_ns: int, ino: int) -> tuple[NoteRecord, SearchDoc]:
    """vaultd's operation log as the index holds it, from its status alone (its first line is the
    header :func:`is_operation_log` recognised).

    Its ``sha256`` stands for the file's identity, made of the header, the size and the mtime:
    hashing the lines would make every write cost more the longer the vault's history, and
    nothing compares the log's bytes with it (an edit of the log is checked against the bytes it
    reads, as any edit is). It changes with every append, so subscribers still see the log change.
    """
    identity = f"{LOG_HEADER}{size}:{mtime_ns}".encode()
    return _record(path, LOG_HEADER, hashlib.sha256(identity).hexdigest(), size=size, mtime_ns=mtime_ns, ino=ino)


def parse_note(path: str, raw: bytes, *, size: int, mtime_ns: int, ino: int) -> tuple[NoteRecord, SearchDoc]:
    """Parse one note. Raises :class:`Skipped` for a file the index must not hold."""
    if is_operation_log(raw):
        # the log's lines are log.tail's and log.grep's, never a note's body; whole bytes at hand
        # (a revision's, say) are hashed as they are
        return _record(path, LOG_HEADER, hashlib.sha256(raw).hexdigest(), size=size, mtime_ns=mtime_ns, ino=ino)
    if len(raw) > MAX_NOTE_BYTES:
        raise too_big(len(raw))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Skipped(IssueCode.S02, f"not valid UTF-8 (byte {exc.start})") from exc
    if "\x00" in text:
        raise Skipped(IssueCode.S03, "contains NUL bytes; not a text note")
    return _record(path, text, hashlib.sha256(raw).hexdigest(), size=size, mtime_ns=mtime_ns, ino=ino)


def _record(path: str, text: str, sha: str, *, size: int, mtime_ns: int, ino: int) -> tuple[NoteRecord, SearchDoc]:
    fm = frontmatter.parse(text)
    scan = markdown.scan(text, fm.body_offset, fm.body_line)
    data = fm.data or {}
    issues: list[NoteIssue] = list(fm.issues)
    title_value = data.get("title")
    if isinstance(title_value, str) and title_value.strip():
        title = title_value.strip()
    else:
        h1 = next((h for h in scan.headings if h.level == 1), None)
        title = h1.text if h1 is not None and h1.text else stem_of(path)
    aliases = _strings(data.get("aliases")) or _strings(data.get("alias"))
    tags = [Tag(name=t, line=0) for t in _frontmatter_tags(data.get("tags"))] + scan.tags
    links = scan.links
    if data:
        links = links + _frontmatter_links(data, fm.body_line)
    record = NoteRecord(
        path=path,
        size=size,
        mtime_ns=mtime_ns,
        ino=ino,
        sha256=sha,
        title=title,
        frontmatter=fm.data,
        aliases=aliases,
        tags=tags,
        headings=scan.headings,
        blocks=scan.blocks,
        links=links,
        issues=issues,
        words=scan.words,
        body_offset=fm.body_offset,
        tasks=scan.tasks,
        characters=scan.characters,
    )
    return record, SearchDoc.from_note(record, text)
