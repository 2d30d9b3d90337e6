"""Vault statistics that are pure functions of the index and the log's lines: activity windows,
log events by type, size by type and domain, and the note-to-source ratio.

Nothing here reads a file: the ratio takes each cited file's size from the index (a source
note's captured ``size`` when it records one, since that is the raw copy's), so a stats call
costs no more than its counting, whatever the sources weigh.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from typing import TYPE_CHECKING, Any

from protocol.methods.reads import LogCounts, NoteSize, RatioNote, RecentNotes, SizeCount, SourceRatio
from protocol.methods.writes import LogType

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from vaultd.vault.model import NoteRecord

_LOG_LINE = re.compile(r"^(\d{4}-\d{2}-\d{2}) \d{2}:\d{2}  ([A-Z]+)  ")
_WIKILINK = re.compile(r"^!?\[\[([^\]|#]+)(?:[#|][^\]]*)?\]\]$")
OTHER = "(other)"
NONE = "(none)"
LARGEST = 5


def scalar(record: NoteRecord, key: str) -> str | None:
    value = (record.frontmatter or {}).get(key)
    return value if isinstance(value, str) and value else None


def window_start(today: dt.date, days: int) -> dt.date:
    """The first local date of a window of ``days`` calendar days ending today (included)."""
    return today - dt.timedelta(days=days - 1)


def recent(notes: Iterable[NoteRecord], today: dt.date, tz: dt.tzinfo | None = None) -> RecentNotes:
    """Notes whose indexed mtime falls on one of the last 7 and 30 local calendar days."""
    week, month = window_start(today, 7), window_start(today, 30)
    n7 = n30 = 0
    for record in notes:
        day = dt.datetime.fromtimestamp(record.mtime_ns / 1e9, tz).date()
        n30 += day >= month
        n7 += day >= week
    return RecentNotes(last_7_days=n7, last_30_days=n30)


def log_counts(lines: list[str] | None, warnings: list[str], today: dt.date, days: int) -> LogCounts:
    """Events dated on or after the window's first day, by type; ``lines`` None: the log was unreadable."""
    since = window_start(today, days)
    if lines is None:
        return LogCounts(since=since.isoformat(), days=days, total=None, by_type=None, issues=warnings)
    by_type: Counter[str] = Counter({t.value: 0 for t in LogType})
    total = 0
    for line in lines:
        m = _LOG_LINE.match(line)
        if m is None or m.group(1) < since.isoformat():
            continue
        total += 1
        by_type[m.group(2) if m.group(2) in LogType.__members__ else OTHER] += 1
    return LogCounts(since=since.isoformat(), days=days, total=total, by_type=dict(sorted(by_type.items())), issues=warnings)


def sizes(notes: Iterable[NoteRecord]) -> NoteSize:
    def add(table: dict[str, list[int]], key: str, record: NoteRecord) -> None:
        row = table.setdefault(key, [0, 0, 0])
        row[0] += 1
        row[1] += record.size
        row[2] += record.words

    total: dict[str, list[int]] = {}
    by_type: dict[str, list[int]] = {}
    by_domain: dict[str, list[int]] = {}
    for record in notes:
        add(total, "", record)
        add(by_type, scalar(record, "type") or NONE, record)
        add(by_domain, scalar(record, "domain") or NONE, record)

    def out(table: dict[str, list[int]]) -> dict[str, SizeCount]:
        return {k: SizeCount(notes=v[0], bytes=v[1], words=v[2]) for k, v in sorted(table.items())}

    return NoteSize(total=out(total).get("", SizeCount(notes=0, bytes=0, words=0)), by_type=out(by_type), by_domain=out(by_domain))


def cited(value: Any) -> list[str]:
    """The references a ``source`` value holds: one string or a list of them."""
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str) and v.strip()]
    return []


def nearest_rank(sorted_values: list[float], percent: int) -> float:
    """The nearest-rank percentile of a sorted, nonempty list."""
    rank = max(1, -(-percent * len(sorted_values) // 100))
    return sorted_values[rank - 1]


def source_ratio(notes: Mapping[str, NoteRecord], size_of: Callable[[str, str], int | None]) -> SourceRatio:
    """Each note citing a ``source`` against the files it names (``size_of(reference, from_path)``:
    the cited file's bytes, or None when no vault file answers to it)."""
    ratios: list[tuple[float, str, int, int]] = []
    sources = skipped = empty = 0
    for path in sorted(notes):
        record = notes[path]
        refs = cited((record.frontmatter or {}).get("source"))
        if not refs:
            continue
        found = 0
        total = 0
        for ref in refs:
            target = ref.strip()
            m = _WIKILINK.match(target)
            size = size_of(m.group(1).strip() if m else target, path)
            if size is None:
                skipped += 1
                continue
            found += 1
            total += size
        if not found:
            continue
        sources += found
        if total == 0:
            empty += 1
            continue
        ratios.append((record.size / total, path, record.size, total))
    values = sorted(r[0] for r in ratios)
    largest = sorted(ratios, key=lambda r: (-r[0], r[1]))[:LARGEST]
    return SourceRatio(
        notes=len(ratios),
        sources=sources,
        median=round(_median(values), 4) if values else None,
        p90=round(nearest_rank(values, 90), 4) if values else None,
        over_one=sum(1 for v in values if v > 1),
        largest=[RatioNote(path=p, ratio=round(r, 4), bytes=b, source_bytes=t) for r, p, b, t in largest],
        skipped=skipped,
        empty_source_notes=empty,
    )


def _median(values: list[float]) -> float:
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2
