"""Size bounds of the protocol, in bytes, each declared once.

The daemon enforces them, the CLI reads them, and the schemas publish them. A JSON Schema
``maxLength`` counts characters, never bytes; since a character is at least one UTF-8 byte, a
string Struct field declares ``max_length`` equal to its byte bound as a sound first check at
decode time, and the daemon enforces the byte bound itself where the text is measured as bytes.
"""

from __future__ import annotations

from typing import Final

KiB: Final = 1024
MiB: Final = 1024 * KiB

MAX_NOTE_BYTES: Final = 2 * MiB  #: a note's whole file; larger files are skipped when indexing and never written
#: A report's whole file (a note under ``reports/``): output a tool writes for a person, such as the
#: lint of a large vault, may outgrow a note; what one call sends stays within a note's bound.
MAX_REPORT_BYTES: Final = 16 * MiB
#: The most bytes JSON spends on one byte of UTF-8 text: a control character is written ``\u0001``.
MAX_JSON_ESCAPE: Final = 6
#: The bound on one JSON-RPC message from a client (the daemon's default; the MCP shim's from its host).
#: It is derived from the largest legal request, a ``note.create`` of a whole note: at most
#: ``MAX_NOTE_BYTES`` of text, each byte at most ``MAX_JSON_ESCAPE`` bytes once escaped (12 MiB), with
#: 4 MiB to spare for the envelope and the other params. A frame over it is refused as LIMIT.
MAX_FRAME_BYTES: Final = MAX_NOTE_BYTES * (MAX_JSON_ESCAPE + 2)
#: The most a client takes in one reply: a result may exceed the request bound (the daemon bounds
#: what it queues per connection with its reply budget).
MAX_REPLY_FRAME_BYTES: Final = 64 * MiB
MAX_QUERY_BYTES: Final = 1 * KiB  #: a search query, as UTF-8
MAX_PATCH_TEXT_BYTES: Final = 64 * KiB  #: each old or new text of a patch, as UTF-8
MAX_APPEND_BYTES: Final = 256 * KiB  #: the Markdown one append adds, as UTF-8
MAX_ERROR_ISSUES: Final = 100  #: issues an error lists; the rest are counted in ``issues_omitted``
MAX_READ_PAGE_BYTES: Final = 64 * KiB  #: the most ``note.read`` returns in one page
DEFAULT_READ_PAGE_BYTES: Final = 16 * KiB  #: the page ``note.read`` returns when ``max_bytes`` is not given


def describe(n: int) -> str:
    """``2 MiB``, ``256 KiB`` or ``100 bytes``: a bound as people read it."""
    for unit, size in (("MiB", MiB), ("KiB", KiB)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} bytes"


def over_bound(field: str, text: str, bound: int) -> str | None:
    """Why ``text`` is over its byte bound, or None. The schema's ``maxLength`` counts characters;
    this is the check that counts what the bound is declared in."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size <= bound:
        return None
    return f"{field} is {size} bytes as UTF-8; it may be at most {describe(bound)}"


MAX_EVENT_FRAME_BYTES: Final = 64 * KiB  #: about the most one ``subscription.events`` notification carries
RETAINED_EVENT_BYTES: Final = 4 * MiB  #: a vault's retained events for ``since``, encoded
MAX_CAPTURE_BYTES: Final = 64 * MiB  #: one captured file's bytes (a raw copy), and every capture of one operation together
MAX_INLINE_CAPTURE_BYTES: Final = 512 * KiB  #: content sent inside a capture call (text or base64 data), before encoding
MAX_RETRIEVE_QUERY_CHARS: Final = 8000  #: a retrieval query, in characters after NFC and whitespace folding

#: Search and retrieval answers, sized for an agent's context: their hits or passages, encoded,
#: fit in this many bytes by default (the first always comes; the rest is counted and a cursor
#: continues after it).
DEFAULT_ANSWER_BYTES: Final = 8 * KiB
MIN_ANSWER_BYTES: Final = 1 * KiB
MAX_ANSWER_BYTES: Final = 1024 * KiB
MAX_CURSOR_CHARS: Final = 128  #: an answer's cursor, as the daemon makes it
