"""A note as ``vaultctl show`` prints it: a header line (path, sha, size), the frontmatter, the body.

The header names the note by path and by the 12-digit sha that ``--expected-sha`` accepts, so what
was read can be edited safely without ``--json``. The frontmatter is printed as YAML-like
``key: value`` lines from the parsed values (the daemon sends values, not the file's header text):
a value that would not read back as the same string (a colon, a quote, leading spaces, a newline)
is shown in JSON's double quotes, and lists in flow style.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from vaultctl import display
from vaultctl.terminal import escape

if TYPE_CHECKING:
    from protocol.methods.reads import ReadResult

SHORT_SHA = 12
_PLAIN_PUNCTUATION = frozenset(" _./()+-")
#: Words YAML (1.1 as well as 1.2) reads as booleans or null, whatever their case.
_RESERVED = frozenset({"true", "false", "null", "yes", "no", "on", "off", "y", "n"})


def _plain(text: str) -> bool:
    """Whether ``text`` reads back as this very string without quotes: it starts with a letter
    (so it is no number, date or indicator) and holds only letters, digits and a few marks."""
    return (
        text[:1].isalpha()
        and text == text.rstrip()
        and all(ch.isalnum() or ch in _PLAIN_PUNCTUATION for ch in text)
        and text.lower() not in _RESERVED
    )


def scalar(value: Any) -> str:
    """One frontmatter value on one line, as YAML would read it back."""
    if isinstance(value, str):
        if not value.isprintable():
            return _quoted(value)
        if _plain(value):
            return value
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(scalar(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{scalar(str(k))}: {scalar(v)}" for k, v in value.items()) + "}"
    return json.dumps(value, ensure_ascii=False)


def _quoted(text: str) -> str:
    """A double-quoted scalar (JSON's escapes, which YAML shares) with every character that is
    not printable written as an escape: ``\\u`` for the Basic Multilingual Plane, ``\\U`` beyond."""
    inner = json.dumps(text, ensure_ascii=False)
    return "".join(ch if ch.isprintable() else f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}" for ch in inner)


def header(r: ReadResult, on: bool) -> str:
    """``path  sha 27a9b933671d  1234 bytes`` (and the section or byte offset of this page)."""
    facts = [f"sha {r.sha256[:SHORT_SHA]}", f"{r.size} bytes"]
    if r.section:
        facts.append(f"section {escape(r.section)}")
    if r.offset:
        facts.append(f"from byte {r.offset}")
    return display.paint(escape(r.path), display.Paint.PATH, on) + "  " + display.paint("  ".join(facts), display.Paint.DIM, on)


def frontmatter(values: dict[str, Any] | None) -> list[str]:
    """The frontmatter between ``---`` lines; nothing when the note has none."""
    if not values:
        return []
    lines = ["---"]
    lines += [f"{escape(str(key))}: {escape(scalar(value))}" for key, value in values.items()]
    return [*lines, "---"]
