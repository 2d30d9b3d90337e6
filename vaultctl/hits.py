"""Search hits for people: each hit's path and title, then its snippet, wrapped and indented, with
the matched words in colour.

The daemon sends each snippet twice: marked with ``**`` (for Markdown readers) and as an
``excerpt`` of the note's own characters with the matches' spans (``highlights``). Text mode shows
the excerpt and colours the spans (or leaves them plain without colour), so a person never reads
our ``**``, while a ``**`` that is part of the note's own text stays as written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vaultctl import display, layout
from vaultctl.terminal import Escaped, escape

if TYPE_CHECKING:
    from collections.abc import Sequence

    from protocol.methods.reads import SearchHit

INDENT = "  "


def matched_text(hit: SearchHit) -> tuple[str, list[bool]]:
    """The hit's excerpt (the snippet without the daemon's ``**`` markers) and, for each
    character, whether it is a match; a hit found without matched text (an identifier, a filter)
    shows its snippet as it is."""
    if not hit.excerpt:
        return hit.snippet, [False] * len(hit.snippet)
    matched = [False] * len(hit.excerpt)
    for start, end in hit.highlights:
        for i in range(max(start, 0), min(end, len(matched))):
            matched[i] = True
    return hit.excerpt, matched


def _escaped(text: str, matched: list[bool]) -> tuple[str, list[bool]]:
    """Escape each character (one may become several), carrying its matched flag along."""
    out: list[str] = []
    flags: list[bool] = []
    for ch, flag in zip(text, matched, strict=True):
        shown = escape(ch)
        out.append(shown)
        flags += [flag] * len(shown)
    return "".join(out), flags


def _painted(line: str, flags: list[bool], on: bool) -> str:
    if not on:
        return line
    out, run_start = [], 0
    for i in range(1, len(line) + 1):
        if i == len(line) or flags[i] != flags[run_start]:
            piece = line[run_start:i]
            out.append(display.paint(piece, display.Paint.MATCH, True) if flags[run_start] else piece)
            run_start = i
    return "".join(out)


def snippet_lines(hit: SearchHit, limit: int | None, on: bool) -> list[str]:
    """The snippet as indented lines of at most ``limit`` columns, matches coloured when ``on``."""
    text, matched = matched_text(hit)
    shown, flags = _escaped(text, matched)
    spans = layout.wrap_spans(shown, limit - len(INDENT)) if limit is not None else [(0, len(shown))]
    return [INDENT + _painted(shown[a:b], flags[a:b], on) for a, b in spans if b > a]


def hits_text(hits: Sequence[SearchHit], limit: int | None = None, on: bool | None = None) -> Escaped:
    """Every hit as a block: its path (and title, when the file name does not say it), then its snippet."""
    fit = display.width() if limit is None else limit
    colour = display.colour() if on is None else on
    blocks = []
    for hit in hits:
        blocks.append("\n".join([*_head(hit, fit, colour), *snippet_lines(hit, fit, colour)]))
    return Escaped("\n\n".join(blocks))


def _head(hit: SearchHit, limit: int | None, on: bool) -> list[str]:
    """The path (wrapped when longer than a line), then the title unless the file name says it."""
    stem = hit.path.rpartition("/")[2].removesuffix(".md")
    path = escape(hit.path)
    title = escape(hit.title) if hit.title and hit.title != stem else ""
    lines = layout.wrap(path, limit) if limit is not None else [path]
    painted = [display.paint(line, display.Paint.PATH, on) for line in lines]
    if not title:
        return painted
    if limit is not None and layout.columns(lines[-1]) + 2 + layout.columns(title) > limit:
        return [*painted, INDENT + display.paint(title, display.Paint.BOLD, on)]
    painted[-1] += "  " + display.paint(title, display.Paint.BOLD, on)
    return painted
