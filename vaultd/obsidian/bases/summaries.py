"""The summaries a view may show under a column: the built-in ones by name (Average, Sum,
Earliest, Checked, Unique...), over the values of the rows returned.

A column of text that reads as numbers (``toFixed()`` gives text) still averages and sums, as in
Obsidian; a summary of no values is empty (Sum is 0).
"""

from __future__ import annotations

import math
import statistics
from typing import Any, Final

from vaultd.obsidian.bases.functions import distinct
from vaultd.obsidian.bases.model import BaseInvalid
from vaultd.obsidian.bases.values import Duration, as_date

__all__ = ["SUMMARIES", "empty", "summary"]

SUMMARIES: Final = (
    "Average",
    "Min",
    "Max",
    "Sum",
    "Range",
    "Median",
    "Stddev",
    "Earliest",
    "Latest",
    "Checked",
    "Unchecked",
    "Empty",
    "Filled",
    "Unique",
)


def empty(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {}


def _numeric(value: Any) -> int | float | None:
    """A number, or text that is one (``toFixed()`` gives text, and its column still averages)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return None if math.isnan(value) else value
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


def summary(name: str, values: list[Any]) -> Any:
    present = [v for v in values if not empty(v)]
    numbers = [n for v in present if (n := _numeric(v)) is not None]
    dates = [d for v in present if (d := as_date(v)) is not None]
    if name == "Empty":
        return len(values) - len(present)
    if name == "Filled":
        return len(present)
    if name == "Checked":
        return sum(1 for v in values if v is True)
    if name == "Unchecked":
        return sum(1 for v in values if v is not True)
    if name == "Unique":
        return len(distinct(present))
    if name in ("Earliest", "Latest"):
        if not dates:
            return None
        pick = min if name == "Earliest" else max
        return pick(dates, key=lambda d: d.at)
    if name == "Range" and dates and not numbers:
        return Duration(0, (max(d.at for d in dates) - min(d.at for d in dates)).total_seconds() * 1000.0)
    if not numbers:
        return 0 if name == "Sum" else None
    if name == "Sum":
        return sum(numbers)
    if name == "Average":
        return statistics.fmean(numbers)
    if name == "Min":
        return min(numbers)
    if name == "Max":
        return max(numbers)
    if name == "Range":
        return max(numbers) - min(numbers)
    if name == "Median":
        return statistics.median(numbers)
    if name == "Stddev":
        return statistics.pstdev(numbers)
    raise BaseInvalid(f"unknown summary {name!r}")
