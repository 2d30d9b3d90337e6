"""Canonical tables: the names of things a vault keeps in a Markdown table, matched against a new note.

A vault may name notes whose table lists the canonical name of each thing it knows (a glossary,
a list of systems, of people). A note a promotion writes is told which rows it mentions, so the
person promoting it can link the canonical note or reuse its name instead of coining another:
advice only, never a refusal, and never part of what a preview's fingerprint binds.

Pure functions over text. What the caller reads is bounded by it (each note by the note bound, all
of them by a byte budget); what this module parses is bounded here (:class:`Budget`): at most 16
tables, 20,000 rows, 40,000 aliases and 256 KiB of key text, whatever the notes hold.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

MAX_TABLES = 16
MAX_ROWS = 20_000
MAX_ALIASES = 40_000
MAX_KEY_BYTES = 256 * 1024
MAX_MATCHES = 5  #: rows reported for one note
MAX_ROW_CHARS = 200  #: of a row's text shown
MAX_MATCH_STEPS = 2_000_000  #: places in the draft tried for names, in all, for one note

#: A delimiter row's cell, as GFM allows it: hyphens, with an optional colon either side.
_DELIMITER_CELL = re.compile(r"^\s*:?-+:?\s*$")
_BOLD = re.compile(r"\*\*|__")
_WIKI = re.compile(r"\[\[([^\[\]]*)\]\]")
_CODE = re.compile(r"`+")
#: Where one cell names several aliases: parentheses, a comma, a slash with space around it.
_ALIAS_SPLIT = re.compile(r"[(),]|\s+/\s+")
_WORD = re.compile(r"\w+")


@dataclass(slots=True)
class Budget:
    """What parsing may still take, shared by every table of one match."""

    tables: int = MAX_TABLES
    rows: int = MAX_ROWS
    aliases: int = MAX_ALIASES
    key_bytes: int = MAX_KEY_BYTES
    spent: str | None = None  #: the bound that stopped parsing, once one has

    def stop(self, why: str) -> None:
        if self.spent is None:
            self.spent = why


@dataclass(frozen=True, slots=True)
class Row:
    path: str  #: the note holding the table
    line: int  #: 1-based
    keys: tuple[str, ...]  #: the cleaned aliases of the chosen cell
    text: str  #: the row as written, trimmed to MAX_ROW_CHARS
    order: int  #: the row's place among every row parsed (configured table order, then row order)


@dataclass(frozen=True, slots=True)
class Match:
    key: str
    row: Row


@dataclass(slots=True)
class Parsed:
    rows: list[Row] = field(default_factory=list)
    tables: int = 0  #: tables found holding the column


def split_cells(line: str) -> list[str]:
    """A table line's cells: split at pipes not escaped with a backslash, without the outer pipes."""
    cells: list[str] = []
    current: list[str] = []
    escaped = False
    for ch in line.strip():
        if escaped:
            current.append(ch)
            escaped = False
        elif ch == "\\":
            current.append(ch)
            escaped = True
        elif ch == "|":
            cells.append("".join(current))
            current = []
        else:
            current.append(ch)
    cells.append("".join(current))
    stripped = line.strip()
    if stripped.startswith("|"):
        cells = cells[1:]
    if stripped.endswith("|") and not stripped.endswith("\\|") and cells:
        cells = cells[:-1]
    return [c.strip().replace("\\|", "|") for c in cells]


def is_delimiter(line: str) -> bool:
    """Whether ``line`` is a table's delimiter row: every cell hyphens with optional colons."""
    if "-" not in line:
        return False
    cells = split_cells(line)
    return bool(cells) and all(_DELIMITER_CELL.match(c) for c in cells)


def clean_key(text: str) -> str:
    """A cell's text as a name: bold, wiki brackets and inline code stripped, spaces folded."""
    text = _WIKI.sub(lambda m: m.group(1), text)
    text = _CODE.sub("", _BOLD.sub("", text))
    return " ".join(text.split())


def aliases(cell: str) -> list[str]:
    """The names one cell gives a thing: split on parentheses, commas and a spaced slash (and a
    wiki link's ``|`` between target and label); one-character names are too short to tell
    anything apart and are dropped. Each once, in order."""
    text = _WIKI.sub(lambda m: m.group(1).replace("|", ","), cell)
    out: list[str] = []
    for part in _ALIAS_SPLIT.split(text):
        key = clean_key(part)
        if len(key) > 1 and key not in out:
            out.append(key)
    return out


@cache
def _is_latin(ch: str) -> bool:
    return unicodedata.name(ch, "").startswith("LATIN ")


def fold(text: str) -> str:
    """``text`` with Latin letters in lower case and every other script as written: case is
    ignored for Latin only (Greek, Cyrillic and the rest keep theirs, as the names are written)."""
    return "".join(ch.lower() if ch.isupper() and _is_latin(ch) else ch for ch in text)


def parse(path: str, text: str, column: str | None, budget: Budget, start: int = 0) -> Parsed:
    """The rows of every table in ``text`` that has ``column`` (by header, case aside; None: the
    first column), until the budget runs out. ``start`` numbers the first row for ordering."""
    out = Parsed()
    lines = text.splitlines()
    want = None if column is None else fold(clean_key(column))
    i = 0
    while i + 1 < len(lines):
        if budget.spent is not None:
            return out
        head, delim = lines[i], lines[i + 1]
        if "|" not in head or not is_delimiter(delim):
            i += 1
            continue
        headers = [fold(clean_key(c)) for c in split_cells(head)]
        i += 2
        at = 0 if want is None else (headers.index(want) if want in headers else -1)
        if at < 0:
            continue
        if budget.tables <= 0:
            budget.stop(f"at most {MAX_TABLES} tables are read")
            return out
        budget.tables -= 1
        out.tables += 1
        while i < len(lines) and "|" in lines[i] and lines[i].strip():
            line = lines[i]
            i += 1
            cells = split_cells(line)
            keys = aliases(cells[at]) if at < len(cells) else []
            if not keys:
                continue
            if budget.rows <= 0:
                budget.stop(f"at most {MAX_ROWS} rows are read")
                return out
            size = sum(len(k.encode("utf-8")) for k in keys)
            if len(keys) > budget.aliases:
                budget.stop(f"at most {MAX_ALIASES} names are read")
                return out
            if size > budget.key_bytes:
                budget.stop(f"at most {MAX_KEY_BYTES // 1024} KiB of names are read")
                return out
            budget.rows -= 1
            budget.aliases -= len(keys)
            budget.key_bytes -= size
            shown = line.strip()
            shown = shown if len(shown) <= MAX_ROW_CHARS else shown[: MAX_ROW_CHARS - 1] + "…"
            out.rows.append(Row(path=path, line=i, keys=tuple(keys), text=shown, order=start + len(out.rows)))
    return out


def matches(draft: str, rows: list[Row], limit: int = MAX_MATCHES, steps: int = MAX_MATCH_STEPS) -> tuple[list[Match], bool]:
    """The rows whose names ``draft`` mentions as whole tokens (no letter, digit or ``_`` of the
    draft on either side), Latin case aside: the longest name first, then table and row order;
    each row once, at most ``limit``. Each name is looked for only where the draft holds its first
    word, and at most ``steps`` places are tried in all: (the matches, whether that bound stopped it)."""
    text = fold(draft)
    starts: dict[str, list[int]] = {}
    for m in _WORD.finditer(text):
        starts.setdefault(m.group(), []).append(m.start())
    found: dict[Row, str] = {}
    left = steps
    for row in rows:
        for key in row.keys:
            wanted = fold(key)
            first = _WORD.search(wanted)
            if first is None:
                continue  # no letter or digit: nothing a whole token could hold
            places = starts.get(first.group(), ())
            if len(places) > left:
                return _ranked(found, limit), True
            left -= len(places)
            if len(key) > len(found.get(row, "")) and _mentions(text, places, wanted, first.start()):
                found[row] = key
    return _ranked(found, limit), False


def _ranked(found: dict[Row, str], limit: int) -> list[Match]:
    ranked = sorted(found.items(), key=lambda kv: (-len(kv[1]), kv[0].order))
    return [Match(key=key, row=row) for row, key in ranked[:limit]]


def _bounded(text: str, at: int, size: int) -> bool:
    before = text[at - 1] if at > 0 else ""
    after = text[at + size] if at + size < len(text) else ""
    return not _WORD.match(before) and not _WORD.match(after)


def _mentions(text: str, places: Iterable[int], key: str, offset: int) -> bool:
    """Whether ``key``, whose first word starts ``offset`` characters in, stands whole in ``text``
    at one of the ``places`` that word starts."""
    return any(at >= offset and text.startswith(key, at - offset) and _bounded(text, at - offset, len(key)) for at in places)
