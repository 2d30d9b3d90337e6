"""JSON edited in place: where each string value sits in a file's text, and a change to part of one
string that leaves every other byte of the file as it was.

Obsidian's JSON files (a ``.canvas``, ``.obsidian/bookmarks.json``) are the person's: their
indentation, key order, number spelling and escapes must survive a link rewrite. Re-serializing
the document would change them, so the file is edited as text: :func:`strings` finds each string
value with its path in the document and its span in the text, and :func:`replace_in_string`
swaps characters of one decoded string for new ones, re-encoding only the new characters. An
unchanged escape (``\\/``, ``\\u00e9``) keeps its spelling.

The scan is iterative, so a hostile document nested a million levels deep costs a linear pass
and no recursion; :func:`strings` refuses text that is not one JSON value (ValueError). Every JSON
file of a vault is read through :func:`load`, which refuses a document nested deeper than
:data:`~protocol.parse_limits.MAX_JSON_DEPTH`, so no later walk of it recurses without bound.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Final

from protocol.parse_limits import MAX_JSON_DEPTH

__all__ = ["JsonString", "load", "replace_in_string", "strings"]

#: One step of the scan: whitespace, then a structural character or a string's opening quote
#: (group 1), or a scalar (a number, true, false, null), which the scan passes over.
_TOKEN: Final = re.compile(r'[ \t\n\r]*(?:([{}\[\],:"])|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null|$)')

Path = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class JsonString:
    """One string value: where it is in the document and in the text, and what it says."""

    path: Path  #: keys and indexes from the root (``("nodes", 3, "text")``)
    start: int  #: offset of its opening quote in the text
    end: int  #: offset just past its closing quote
    value: str  #: decoded


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _too_deep(doc: Any) -> bool:
    """Whether ``doc`` nests objects and arrays deeper than :data:`MAX_JSON_DEPTH` (iteratively)."""
    stack: list[tuple[Any, int]] = [(doc, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            value = list(value.values())
        elif not isinstance(value, list):
            continue
        if depth > MAX_JSON_DEPTH:
            return True
        stack += [(item, depth + 1) for item in value if isinstance(item, (dict, list))]
    return False


def load(text: str | bytes) -> Any:
    """The document, strictly (no NaN or Infinity); ValueError when ``text`` is not JSON or nests
    deeper than :data:`MAX_JSON_DEPTH`."""
    try:
        doc = json.loads(text, parse_constant=_refuse_constant)
    except RecursionError as exc:  # the C decoder recurses; a value nested this deep is not a canvas
        raise ValueError(f"the JSON nests deeper than {MAX_JSON_DEPTH} levels") from exc
    if _too_deep(doc):
        raise ValueError(f"the JSON nests deeper than {MAX_JSON_DEPTH} levels")
    return doc


def strings(text: str) -> list[JsonString]:
    """Every string value of the JSON ``text`` (object keys excluded), in text order.

    Raises:
        ValueError: ``text`` is not one JSON value.
    """
    load(text)  # only well-formed text is scanned, so the scan below can trust its structure
    found: list[JsonString] = []
    # One frame per open container: [is_object, its path, next array index, current key, expecting a key]
    frames: list[list[Any]] = []

    def here() -> Path:
        if not frames:
            return ()
        frame = frames[-1]
        return (*frame[1], frame[3] if frame[0] else frame[2])

    i, n = 0, len(text)
    while i < n:
        token = _TOKEN.match(text, i)
        if token is None:  # cannot happen after load(); never loop forever if it does
            raise ValueError(f"unexpected character at offset {i}")
        c = token.group(1)
        i = token.end()
        if c is None or c == ":":  # whitespace, a number, true, false or null
            continue
        if c == "{":
            frames.append([True, here(), 0, None, True])
        elif c == "[":
            frames.append([False, here(), 0, None, False])
        elif c in "}]":
            frames.pop()
        elif c == ",":
            if frames[-1][0]:
                frames[-1][4] = True
            else:
                frames[-1][2] += 1
        else:  # a string: decoded by the json module's own scanner, in C
            value, end = json.decoder.scanstring(text, i)  # type: ignore[attr-defined]
            if frames and frames[-1][0] and frames[-1][4]:
                frames[-1][3], frames[-1][4] = value, False
            else:
                found.append(JsonString(here(), i - 1, end, value))
            i = end
    return found


def _char_offsets(inner: str) -> list[int]:
    """The offset in ``inner`` (a string token without its quotes) where each decoded character
    starts, and the end: a surrogate pair written as two escapes is one character."""
    offsets: list[int] = []
    i, n = 0, len(inner)
    while i < n:
        offsets.append(i)
        if inner[i] != "\\":
            i += 1
        elif inner[i + 1] != "u":
            i += 2
        else:
            high = int(inner[i + 2 : i + 6], 16)
            pair = 0xD800 <= high < 0xDC00 and inner[i + 6 : i + 8] == "\\u" and 0xDC00 <= int(inner[i + 8 : i + 12], 16) < 0xE000
            i += 12 if pair else 6
    offsets.append(n)
    return offsets


def encode_fragment(text: str, ascii_only: bool) -> str:
    """``text`` as it goes between a JSON string's quotes, escaped as JSON.stringify does (and
    every non-ASCII character as ``\\uXXXX`` when ``ascii_only``)."""
    return json.dumps(text, ensure_ascii=ascii_only)[1:-1]


def replace_in_string(text: str, token: JsonString, edits: list[tuple[int, int, str]]) -> str:
    """The string token of ``text`` at ``token`` with decoded spans replaced: each edit is
    (start, end, new) in ``token.value``, in order and not overlapping. Only the replaced
    characters are re-encoded; a file that is all ASCII stays so."""
    inner = text[token.start + 1 : token.end - 1]
    offsets = _char_offsets(inner)
    ascii_only = text.isascii()
    out: list[str] = []
    pos = 0
    for start, end, new in edits:
        out += [inner[pos : offsets[start]], encode_fragment(new, ascii_only)]
        pos = offsets[end]
    out.append(inner[pos:])
    return '"' + "".join(out) + '"'
