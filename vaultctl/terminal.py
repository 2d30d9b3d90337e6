"""Text that may reach a terminal: file names, titles, snippets and messages made harmless.

A shared vault's file name or a note's title is anyone's text. Printed raw, an ESC or a C1 byte
is a command to the terminal (``ESC ] 0 ; title BEL`` renames the window, ``ESC [ 2 J`` clears
it) and a bidi override reorders what the reader sees. So every character a terminal would act
on, and every lone surrogate (which could not even be encoded), is shown as an escape instead:
``\\x1b`` below U+0100, ``\\u202e`` above. Printable text passes unchanged.

The escaping of data is reversible: a backslash is doubled exactly where it would otherwise read
as the start of an escape (before another backslash, before ``xHH`` or ``uHHHH``, or before a
character that is itself escaped), so two different names never print alike.

``--json`` output is exact instead: JSON's own ``\\uXXXX`` escapes, which decode to the same text.
"""

from __future__ import annotations

import enum
import os
import re
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from collections.abc import Sequence

# Everything a terminal may act on except tab, newline and carriage return, which depend on the mode:
# C0, DEL and C1 controls, the bidi embeddings/overrides U+202A..U+202E and isolates U+2066..U+2069,
# and lone surrogates.
_ACTIVE = r"\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_LOOKS_ESCAPED = r"x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}"


def _pattern(also: str, lone_cr: bool, reversible: bool) -> re.Pattern[str]:
    active = f"[{_ACTIVE}{also}]" + (r"|\r(?!\n)" if lone_cr else "")
    backslash = rf"|\\(?={active}|\\|{_LOOKS_ESCAPED})" if reversible else ""
    return re.compile(active + backslash)


# (multiline, reversible) -> pattern. One line: tab, newline and CR are escaped too, so a value
# cannot forge a line. A block of lines (a note body, a table): tab and newline stay, CR only in CRLF.
_PATTERNS = {
    (False, True): _pattern(r"\t\n\r", False, True),
    (False, False): _pattern(r"\t\n\r", False, False),
    (True, True): _pattern("", True, True),
    (True, False): _pattern("", True, False),
}

# What JSON text may still carry raw after msgspec (which escapes C0 and never emits surrogates).
_JSON_RAW = re.compile(r"[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _escape_one(match: re.Match[str]) -> str:
    ch = match.group()
    if ch == "\\":
        return "\\\\"
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


class Escaped(str):
    """Text whose data is escaped already (a table: each cell escaped as one line); escaping it
    again would double its backslashes, so :func:`escape` returns it as it is. Adding plain text
    escapes that text (as a block) and keeps the result :class:`Escaped`."""

    def __add__(self, other: str) -> Escaped:
        return Escaped(str(self) + escape(other, multiline=True))

    def __radd__(self, other: str) -> Escaped:
        return Escaped(escape(other, multiline=True) + str(self))


def compose(parts: list[str], sep: str = "\n") -> Escaped:
    """``sep.join(parts)``, escaping each part that is not :class:`Escaped` already."""
    return Escaped(sep.join(escape(p, multiline=True) for p in parts))


def escape(text: str, *, multiline: bool = False, reversible: bool = True) -> str:
    """``text`` with every terminal-active character escaped.

    ``multiline`` keeps newlines, tabs and CRLF line ends (for note bodies); otherwise they are
    escaped too, so one value prints as one line (a table escapes each cell so, and returns
    :class:`Escaped`). ``reversible=False`` leaves every backslash alone: for messages, which
    often quote a name already escaped by ``repr`` and are read, not parsed; data (names, titles,
    bodies) stays reversible.
    """
    if isinstance(text, Escaped):
        return text
    return _PATTERNS[multiline, reversible].sub(_escape_one, text)


_PLAIN_WORD = re.compile(r"[A-Za-z0-9_@%+=:,./-]+")
_QUOTED_NEEDS_ANSI = re.compile(f"[{_ACTIVE}\t\n\r]")


def command_line(words: Sequence[str]) -> Escaped:
    """A shell command a person can paste as it is printed: each word quoted for the shell, and no
    character the terminal would act on (nor any escaping of ours) in between.

    A word of plain characters prints bare; a printable one in single quotes, where a backslash
    or a ``$`` means itself, so a regex or a JSON value comes back byte for byte; a word holding a
    control or bidi character in ANSI-C quotes (``$'...'``, understood by bash and zsh), the
    character written as its escape. The result is :class:`Escaped`: printing it changes nothing.
    """
    return Escaped(" ".join(_shell_word(w) for w in words))


def _shell_word(word: str) -> str:
    if word and _PLAIN_WORD.fullmatch(word):
        return word
    if not _QUOTED_NEEDS_ANSI.search(word):
        return "'" + word.replace("'", "'\\''") + "'"
    out = []
    for ch in word:
        if ch in "\\'":
            out.append("\\" + ch)
        elif _QUOTED_NEEDS_ANSI.fullmatch(ch):
            # Its bytes, whatever the locale: UTF-8, or the one byte a surrogate-escaped argument held.
            raw = ch.encode("utf-8", "surrogateescape") if 0xDC80 <= ord(ch) <= 0xDCFF else ch.encode("utf-8", "surrogatepass")
            out.append("".join(f"\\x{b:02x}" for b in raw))
        else:
            out.append(ch)
    return "$'" + "".join(out) + "'"


def escape_json(text: str) -> str:
    """JSON text with DEL, C1 and bidi controls written as ``\\uXXXX``; it decodes to the same value.

    Outside strings JSON text is ASCII, so every such character is inside a string, where the
    escape means exactly that character.
    """
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class Colour(enum.StrEnum):
    """When text output is coloured: on a terminal (``auto``, unless ``NO_COLOR`` is set or
    ``TERM`` is ``dumb``), always, or never."""

    AUTO = "auto"
    ALWAYS = "always"
    NEVER = "never"


def wants_colour(stream: TextIO, choice: Colour = Colour.AUTO) -> bool:
    if choice is not Colour.AUTO:
        return choice is Colour.ALWAYS
    return stream.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


MATCH_ON = "\x1b[1;31m"  #: bold red, as grep and rg show a match
MATCH_OFF = "\x1b[0m"
SGR = re.compile("\x1b\\[[0-9;]*m")  #: our own styling; data never holds a raw ESC (it is escaped)


def highlighted(text: str, spans: Sequence[tuple[int, int]], colour: bool) -> Escaped:
    """``text`` escaped as one line, each span shown in :data:`MATCH_ON` when ``colour``, else
    unmarked: a mark of ours in the text could be taken for the note's own ``**``."""
    if not colour or not spans:
        return Escaped(escape(text))
    out: list[str] = []
    pos = 0
    for start, end in spans:
        start, end = max(start, pos), min(end, len(text))
        if start >= end:
            continue
        out += [escape(text[pos:start]), MATCH_ON, escape(text[start:end]), MATCH_OFF]
        pos = end
    out.append(escape(text[pos:]))
    return Escaped("".join(out))
