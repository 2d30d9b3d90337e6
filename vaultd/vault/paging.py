"""Byte paging of note text: UTF-8 offsets that never split a character, and opaque cursors."""

from __future__ import annotations

import base64

from vaultd.errors import InvalidParams


def utf8_page(text: str, offset: int, max_bytes: int) -> tuple[str, int | None]:
    """The piece of ``text`` starting at byte ``offset``, at most ``max_bytes`` long, and the
    next offset (None at the end). An offset inside a character, or a budget too small for the
    next character, is refused rather than silently moved.

    Raises:
        InvalidParams: INVALID_PARAMS, the offset is past the end or inside a character, or the
            budget is smaller than the next character.
    """
    data = text.encode("utf-8")
    if offset > len(data):
        raise InvalidParams(f"offset {offset} is past the end ({len(data)} bytes)")
    if offset < len(data) and (data[offset] & 0xC0) == 0x80:
        raise InvalidParams(f"offset {offset} is inside a UTF-8 character; use a next_offset value")
    end = min(len(data), offset + max_bytes)
    while end < len(data) and end > offset and (data[end] & 0xC0) == 0x80:
        end -= 1
    if end == offset and offset < len(data):
        raise InvalidParams(f"max_bytes {max_bytes} is smaller than the character at offset {offset}")
    return data[offset:end].decode("utf-8"), (end if end < len(data) else None)


def encode_cursor(value: str) -> str:
    return base64.urlsafe_b64encode(value.encode("utf-8")).decode("ascii").rstrip("=")


def decode_cursor(cursor: str) -> str:
    """The text a cursor encodes (URL-safe base64, unpadded), refusing one this daemon did not make.

    Raises:
        InvalidParams: INVALID_PARAMS, it is not base64 of UTF-8 text.
    """
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        return base64.b64decode(padded, altchars=b"-_", validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError) as exc:  # binascii.Error is a ValueError
        raise InvalidParams("the cursor is not one this daemon returned") from exc
