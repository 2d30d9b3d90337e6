"""Operation ids: readable, unique, and in the order the operations were applied.

An id is the UTC time to the microsecond and eight random hex digits, for example
``20261203T092409.123456-1a2b3c4d``. Its name sorts as its time does, and journal listings,
pruning, recovery and ``op.list`` all order by it, so the time part must never repeat or go back
within a vault: each new id takes the later of the clock and one microsecond after the vault's
newest id. The newest id is carried across restarts by the vault's newest sealed journal (pruning
always keeps it), so a clock stepped back cannot reorder or reuse ids. The random part keeps ids
from different vaults apart. Ids of the earlier form (``20261203T092409-1a2b3c4d``, whole
seconds) are still read; they sort before every id of the same second.
"""

from __future__ import annotations

import datetime as dt
import re
import secrets
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

OP_ID = re.compile(r"(?P<second>[0-9]{8}T[0-9]{6})(?:\.(?P<micro>[0-9]{6}))?-[0-9a-f]{8}")
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)

_last: dict[Path, int] = {}  #: per vault root: the time part of the newest id, in microseconds


def is_op_id(name: str) -> bool:
    return OP_ID.fullmatch(name) is not None


def op_time_us(op_id: str) -> int:
    """The time part of an id, in microseconds since the epoch.

    Raises:
        ValueError: ``op_id`` is not an operation id.
    """
    m = OP_ID.fullmatch(op_id)
    if m is None:
        raise ValueError(f"not an operation id: {op_id!r}")
    second = dt.datetime.strptime(m["second"], "%Y%m%dT%H%M%S").replace(tzinfo=dt.UTC)
    return _us(second) + int(m["micro"] or 0)


def sort_key(op_id: str) -> str:
    """The id itself: its time is fixed-width UTC digits, so the text sorts as the time does,
    and an id of the earlier form sorts before the new ones of its second ('-' before '.').
    Parsing each time instead cost a pruning daemon a fifth of every write."""
    return op_id


def _us(when: dt.datetime) -> int:
    delta = when - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def format_op_id(time_us: int) -> str:
    when = _EPOCH + dt.timedelta(microseconds=time_us)
    return f"{when:%Y%m%dT%H%M%S}.{when.microsecond:06d}-{secrets.token_hex(4)}"


def next_op_id(root: Path, now: dt.datetime, newest_on_disk: Callable[[], str | None]) -> str:
    """A new id for an operation on the vault at ``root``, later than every id it has.

    ``newest_on_disk`` returns the vault's newest sealed journal's id; it is asked the first time
    this process issues an id for the vault. Callers hold the vault's writer.
    """
    if root not in _last:
        newest = newest_on_disk()
        _last[root] = op_time_us(newest) if newest is not None else 0
    time_us = max(_us(now.astimezone(dt.UTC)), _last[root] + 1)
    _last[root] = time_us
    return format_op_id(time_us)
