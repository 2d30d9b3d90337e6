"""Where a note names another note: the first free mention of each name or alias, as whole words.

Pure over a note's text and what the index knows of it. A mention is free where Obsidian would
read plain prose: not in the frontmatter, a heading, a table row (a link's ``|`` would split a
cell), fenced or inline code, a comment, an existing link or embed, a URL, or a tag. Names
compare case-insensitively (Obsidian's link resolution does); the note keeps its own spelling,
which the link shows. A name two notes share names neither, a note never links to itself, and
a note it links already is not suggested again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from vaultd.vault.link_targets import name_key
from vaultd.vault.markdown import mask_code

if TYPE_CHECKING:
    from collections.abc import Iterable

MIN_NAME_CHARS = 3  #: shorter names ("Go", "AI") match too much prose to be worth a suggestion
MAX_NAME_WORDS = 8  #: longer names are not looked for
MAX_MENTIONS = 200  #: suggestions for one note

_WORD = re.compile(r"\w+")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://\S*|www\.\S+")
_TABLE_ROW = re.compile(r"^[ \t]*\|.*$", re.MULTILINE)
_HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t].*)?$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Mention:
    start: int  #: character offset in the whole text
    end: int
    text: str  #: as the note spells it
    path: str  #: the note it names


def names_table(entries: Iterable[tuple[str, Iterable[str]]]) -> dict[str, str]:
    """Name key -> path for every (path, names) given; a name two notes share is left out."""
    seen: dict[str, str | None] = {}
    for path, names in entries:
        for name in names:
            name = name.strip()
            if len(name) < MIN_NAME_CHARS or not (name[0].isalnum() or name[0] == "_") or not (name[-1].isalnum() or name[-1] == "_"):
                continue
            if len(_WORD.findall(name)) > MAX_NAME_WORDS:
                continue
            key = name_key(name)
            if key in seen and seen[key] != path:
                seen[key] = None
            else:
                seen[key] = path
    return {k: v for k, v in seen.items() if v is not None}


def _blocked(text: str, body_offset: int, spans: Iterable[tuple[int, int]]) -> bytearray:
    """One flag per character: 1 where a mention may not start or run."""
    blocked = bytearray(len(text))
    blocked[:body_offset] = b"\x01" * min(body_offset, len(text))
    clean = text[:body_offset] + mask_code(text[body_offset:])
    for i, (real, seen) in enumerate(zip(text, clean, strict=True)):
        if real != seen:
            blocked[i] = 1
    for pattern in (_URL, _TABLE_ROW, _HEADING):
        for m in pattern.finditer(text, body_offset):
            blocked[m.start() : m.end()] = b"\x01" * (m.end() - m.start())
    for start, end in spans:
        start, end = min(start, len(blocked)), min(end, len(blocked))  # never grows the flags
        blocked[start:end] = b"\x01" * max(end - start, 0)
    return blocked


def mentions(
    text: str,
    body_offset: int,
    link_spans: Iterable[tuple[int, int]],
    names: dict[str, str],
    self_path: str,
    already: Iterable[str] = (),
) -> list[Mention]:
    """The first free mention of each other note the text does not link ``already``, in text order
    (at most :data:`MAX_MENTIONS`)."""
    blocked = _blocked(text, body_offset, link_spans)
    words = [(m.start(), m.end()) for m in _WORD.finditer(text, body_offset)]
    found: list[Mention] = []
    linked: set[str] = set(already)
    i = 0
    while i < len(words) and len(found) < MAX_MENTIONS:
        start = words[i][0]
        if blocked[start] or (start > 0 and text[start - 1] == "#"):
            i += 1
            continue
        hit = None
        for n in range(min(MAX_NAME_WORDS, len(words) - i), 0, -1):
            end = words[i + n - 1][1]
            if "\n" in text[start:end] or any(blocked[start:end]):
                continue
            path = names.get(name_key(text[start:end]))
            if path is not None and path != self_path and path not in linked:
                hit = Mention(start, end, text[start:end], path)
                i += n
                break
        if hit is None:
            i += 1
            continue
        linked.add(hit.path)
        found.append(hit)
    return found
