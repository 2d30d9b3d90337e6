"""Which lines a write adds, so screening judges only what the write brings in.

Lines are split on LF; a trailing CR belongs to the line ending, not the content, so a note that
switches from CRLF to LF adds nothing. The difference is a multiset difference by content: moving
lines around, or reordering a list, adds nothing, while a second copy of an existing line is added.
"""

from __future__ import annotations

from collections import Counter


def split_lines(text: str) -> list[str]:
    """The LF-separated lines of ``text`` without their line endings (no empty tail after a final LF)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def added_lines(before: str | None, after: str) -> list[tuple[int, str]]:
    """The lines of ``after`` that ``before`` does not hold, as ``(1-based line number, text)``.

    ``before`` is None for a new file: every line is added. When ``after`` holds more copies of a
    line than ``before``, the earliest copies count as kept and the later ones as added.
    """
    remaining = Counter(split_lines(before)) if before is not None else Counter[str]()
    added: list[tuple[int, str]] = []
    for number, line in enumerate(split_lines(after), start=1):
        if remaining[line] > 0:
            remaining[line] -= 1
        else:
            added.append((number, line))
    return added
