"""Answers that fit an agent's context: a list cut to a byte budget, with a cursor for the rest.

A search or retrieval answer is read by a model whose context is small and dear: the daemon cuts
its list where the encoded items pass ``max_bytes`` (the first item always comes, so an answer
is never empty while something was found), counts what it left out, and hands a cursor that
continues after the last item shown. The cursor names the offset and a digest of the question,
so it continues only the question it came from.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, TypeVar

import msgspec

from vaultd.errors import InvalidParams

if TYPE_CHECKING:
    from collections.abc import Sequence

T = TypeVar("T")
MAX_OFFSET = 5000  #: items a cursor may skip at most


def fitted(items: Sequence[T], max_bytes: int) -> list[T]:
    """The first items whose encoded size fits ``max_bytes`` (the first always comes)."""
    out: list[T] = []
    used = 0
    for item in items:
        size = len(msgspec.json.encode(item)) + 1
        if out and used + size > max_bytes:
            break
        out.append(item)
        used += size
    return out


def asked(*fields: object) -> str:
    """What a cursor is bound to: the same question, asked the same way."""
    return hashlib.blake2b(repr(fields).encode(), digest_size=6).hexdigest()


def cursor_at(offset: int, question: str) -> str:
    return f"{offset}.{question}"


def offset_of(cursor: str | None, question: str) -> int:
    """Where a cursor continues (0 without one).

    Raises:
        InvalidParams: a cursor of another question, or not one this daemon made.
    """
    if cursor is None:
        return 0
    offset, _, bound = cursor.partition(".")
    if not offset.isdigit() or bound != question or int(offset) > MAX_OFFSET:
        raise InvalidParams("the cursor is not one of this question's answers; ask again without it")
    return int(offset)
