"""Fitting text to a width in terminal columns: wrapping lines and sharing a width among columns.

Widths are terminal columns, not characters: East Asian wide and fullwidth characters take two,
combining marks none. Text reaching here is escaped already (:mod:`vaultctl.terminal`), so it
holds no control characters whose width would be unknown.
"""

from __future__ import annotations

import unicodedata

MIN_COLUMN = 8  #: a column is never squeezed below this (or its header), however narrow the screen


def char_width(ch: str) -> int:
    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in "WF" else 1


def columns(text: str) -> int:
    """Terminal columns ``text`` takes on one line."""
    return sum(char_width(ch) for ch in text)


def pad(text: str, width: int) -> str:
    return text + " " * max(0, width - columns(text))


def wrap(text: str, width: int) -> list[str]:
    """``text`` cut into lines of at most ``width`` columns, at spaces where a line has one,
    else anywhere (a long path has no space to break at). Never returns an empty list."""
    return [text[start:end] for start, end in wrap_spans(text, width)]


def wrap_spans(text: str, width: int) -> list[tuple[int, int]]:
    """Where :func:`wrap` cuts ``text``: each line's ``[start, end)`` in it (the space a line
    breaks at belongs to no line)."""
    if width < 1 or columns(text) <= width:
        return [(0, len(text))]
    spans: list[tuple[int, int]] = []
    start = 0
    while columns(text[start:]) > width:
        cut, used, last_space = start, 0, -1
        for i in range(start, len(text)):
            w = char_width(text[i])
            if used + w > width:
                break
            used += w
            cut = i + 1
            if text[i] == " ":
                last_space = i
        if last_space > start:
            end = last_space
            while end > start and text[end - 1] == " ":
                end -= 1
            spans.append((start, end))
            start = last_space + 1
        else:
            cut = max(cut, start + 1)
            spans.append((start, cut))
            start = cut
        while start < len(text) and text[start] == " ":  # a line never starts with the space it broke at
            start += 1
    if start < len(text) or not spans:
        spans.append((start, len(text)))
    return spans


def share(natural: list[int], floors: list[int], limit: int, gap: int = 2) -> list[int]:
    """Column widths that fit ``limit`` columns with ``gap`` between them: the widest column gives
    way first, never below its floor. When even the floors do not fit, the floors are returned
    (the table then overflows rather than losing its headers)."""
    widths = list(natural)
    budget = limit - gap * (len(widths) - 1)
    while sum(widths) > budget:
        shrinkable = [i for i, w in enumerate(widths) if w > floors[i]]
        if not shrinkable:
            break
        widest = max(shrinkable, key=lambda i: widths[i])
        others = sorted((widths[i] for i in shrinkable if i != widest), reverse=True)
        # Shrink the widest to the next widest (or to what fits), one step at a time.
        target = max(floors[widest], others[0] if others else floors[widest], widths[widest] - (sum(widths) - budget))
        widths[widest] = target if target < widths[widest] else widths[widest] - 1
    return widths


def floor(header: str, natural: int) -> int:
    return min(natural, max(MIN_COLUMN, columns(header)))
