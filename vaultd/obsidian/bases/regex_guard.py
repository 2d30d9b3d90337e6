"""Regular expressions from a ``.base``, compiled only when they cannot backtrack for long.

Python's ``re`` cannot be interrupted, and a pattern like ``(a+)+b`` takes exponential time on a
line of ``a``s: one such filter would hold a worker thread for hours. So a pattern is accepted
only in a shape whose matching cost stays polynomial and small: no quantifier on a group that
holds a quantifier or an alternation, no back-references or look-arounds, at most two unbounded
quantifiers, a short pattern; and a subject longer than :data:`MAX_SUBJECT_CHARS` is refused.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["MAX_PATTERN_CHARS", "MAX_SUBJECT_CHARS", "RegexRefused", "compile_pattern"]

MAX_PATTERN_CHARS: Final = 256
MAX_SUBJECT_CHARS: Final = 10_000
MAX_UNBOUNDED: Final = 2  #: ``*``, ``+`` and ``{n,}`` in one pattern


class RegexRefused(ValueError):
    """The pattern is outside the shapes accepted; the message says which rule it breaks."""


def _check(source: str) -> None:
    if len(source) > MAX_PATTERN_CHARS:
        raise RegexRefused(f"is longer than {MAX_PATTERN_CHARS} characters")
    unbounded = 0
    # per open group: whether it holds a quantifier or an alternation
    groups: list[bool] = []
    last_group_risky = False
    pos, n = 0, len(source)
    in_class = False
    while pos < n:
        ch = source[pos]
        if ch == "\\":
            nxt = source[pos + 1 : pos + 2]
            if nxt.isdigit() and nxt != "0" or nxt == "k":
                raise RegexRefused("uses a back-reference")
            pos += 2
            last_group_risky = False
            continue
        if in_class:
            in_class = ch != "]"
            pos += 1
            continue
        if ch == "[":
            in_class = True
            last_group_risky = False
        elif ch == "(":
            if source.startswith(("(?=", "(?!", "(?<=", "(?<!"), pos):
                raise RegexRefused("uses a look-around")
            groups.append(False)
            last_group_risky = False
        elif ch == ")":
            last_group_risky = groups.pop() if groups else False
            if groups and last_group_risky:
                groups[-1] = True
            pos += 1
            continue
        elif ch == "|":
            if groups:
                groups[-1] = True
            last_group_risky = False
        elif ch in "*+?{":
            if ch == "{":
                close = source.find("}", pos)
                body = source[pos + 1 : close] if close > 0 else ""
                if not re.fullmatch(r"\d+(,\d*)?", body):
                    pos += 1
                    continue
                if body.endswith(",") or int(body.split(",")[-1] or 0) > 100:
                    unbounded += 1
                pos = close
            elif ch != "?":
                unbounded += 1
            if last_group_risky:
                raise RegexRefused("repeats a group that itself repeats or alternates")
            if groups:
                groups[-1] = True
            last_group_risky = False
        else:
            last_group_risky = False
        pos += 1
    if unbounded > MAX_UNBOUNDED:
        raise RegexRefused(f"has more than {MAX_UNBOUNDED} unbounded repetitions")


def compile_pattern(source: str, flags: str) -> re.Pattern[str]:
    """``/source/flags`` compiled with Python's ``re`` (JavaScript's syntax is close for what is
    accepted).

    Raises:
        RegexRefused: the shape could backtrack for long, or the pattern does not compile.
    """
    _check(source)
    bits = 0
    if "i" in flags:
        bits |= re.IGNORECASE
    if "m" in flags:
        bits |= re.MULTILINE
    if "s" in flags:
        bits |= re.DOTALL
    try:
        return re.compile(source, bits)
    except (re.error, RecursionError, OverflowError) as exc:
        raise RegexRefused(f"does not compile: {exc}") from None
