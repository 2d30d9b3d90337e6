"""Heading-aware chunks: a note's body cut into passages that each sit under one heading path.

A section (a heading and the lines up to the next heading) is one chunk when it is short; a long
one is cut at blank lines once it holds :data:`TARGET_WORDS` words, and at any line past twice
that. Every chunk keeps its 1-based line range in the file, so a citation opens at the lines it
quotes. Sections with nothing but their heading are left out: they answer nothing.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from vaultd.vault.model import Heading

TARGET_WORDS = 160  #: a chunk is cut at the next blank line once it holds this many words
MAX_WORDS = 2 * TARGET_WORDS  #: and at the next line past this many
MAX_HEADING_DEPTH = 6


@dataclass(frozen=True, slots=True)
class Chunk:
    heading: tuple[str, ...]  #: the headings above it, outermost first
    line_start: int  #: 1-based, in the whole file
    line_end: int
    text: str


def chunk_note(body: str, body_line: int, headings: Sequence[Heading]) -> list[Chunk]:
    """The chunks of a body that starts at line ``body_line`` of its file; ``headings`` are the
    note's headings with file line numbers (the scanner's, which skip fenced code)."""
    at = {h.line: h for h in headings}
    stack: list[tuple[int, str]] = []
    chunks: list[Chunk] = []
    lines: list[str] = []
    start = body_line
    words = 0
    has_text = False

    def flush(end: int) -> None:
        nonlocal lines, words, has_text
        if lines and has_text:
            chunks.append(Chunk(tuple(t for _, t in stack), start, end, "\n".join(lines).strip("\n")))
        lines, words, has_text = [], 0, False

    for offset, line in enumerate(body.split("\n")):
        number = body_line + offset
        heading = at.get(number)
        if heading is not None:
            flush(number - 1)
            while stack and stack[-1][0] >= heading.level:
                stack.pop()
            if len(stack) < MAX_HEADING_DEPTH:
                stack.append((heading.level, heading.text))
            start = number
            lines = [line]
            continue
        if not lines:
            start = number
        count = len(line.split())
        if words >= MAX_WORDS or (words >= TARGET_WORDS and not line.strip()):
            flush(number - 1)
            start = number
        if not lines and not line.strip():
            start = number + 1
            continue
        lines.append(line)
        words += count
        has_text = has_text or bool(count)
    flush(body_line + body.count("\n"))
    return [_trimmed(c) for c in chunks]


def _trimmed(chunk: Chunk) -> Chunk:
    """The chunk without trailing blank lines in its range."""
    lines = chunk.text.split("\n")
    return Chunk(chunk.heading, chunk.line_start, chunk.line_start + len(lines) - 1, chunk.text)


#: Of each passage, what the meaning model embeds: the note's title, the heading path and the
#: start of the text. A transformer's cost grows with its tokens, and the head says most
#: (docs/dependencies.md, "Choosing the meaning model").
EMBED_CHARS = 400
MAX_TITLE_CHARS = 200


def embed_text(title: str, heading: Sequence[str], text: str) -> str:
    """What the meaning model embeds for one passage (bounded, whatever the note holds)."""
    path = " > ".join(heading)[:MAX_TITLE_CHARS]
    return f"{title[:MAX_TITLE_CHARS]}: {path}\n{text[:EMBED_CHARS]}"


def passage_key(embedded: str) -> bytes:
    """A passage's key: the digest of what is embedded, so identical passages share one vector
    and a passage whose embedded text did not change is never embedded again."""
    return hashlib.blake2b(embedded.encode("utf-8", "surrogatepass"), digest_size=16).digest()
