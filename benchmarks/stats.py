"""Figures: a sample of timings summarised as median and p95, and the machine's facts."""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

if TYPE_CHECKING:
    from collections.abc import Iterable

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def pct(values: Iterable[float], p: float) -> float:
    """The ``p``-th percentile by linear interpolation between closest ranks (p50 is the median)."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("no values")
    k = (len(ordered) - 1) * p / 100
    lo = int(k)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


@dataclass
class Figure:
    """One measured quantity: a sample (seconds, bytes or a rate) or the reason there is none."""

    unit: str  #: "s", "B", "%", "/s"
    samples: list[float] = field(default_factory=list)
    note: str = ""  #: how it was measured, or why it was not ("not built yet", an error)
    extrapolated: bool = False

    @property
    def ok(self) -> bool:
        return bool(self.samples)

    @property
    def p50(self) -> float:
        return pct(self.samples, 50)

    @property
    def p95(self) -> float:
        return pct(self.samples, 95)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"unit": self.unit, "n": len(self.samples), "note": self.note}
        if self.samples:
            out.update(
                p50=self.p50,
                p95=self.p95,
                min=min(self.samples),
                max=max(self.samples),
                mean=statistics.fmean(self.samples),
                samples=[float(f"{x:.6g}") for x in self.samples],
            )
        if self.extrapolated:
            out["extrapolated"] = True
        return out


def missing(unit: str, why: str) -> Figure:
    return Figure(unit, [], why)


class Stopwatch:
    """Wall seconds of a block."""

    def __enter__(self) -> Self:
        self._t = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self._t


def rss_bytes(pid: int) -> int:
    """Resident set size from ``/proc/<pid>/status`` (VmRSS, in KiB there)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def tree_rss_bytes(pid: int) -> int:
    """RSS of a process and its descendants (a server behind a launcher script)."""
    total = 0
    for p in [pid, *descendants(pid)]:
        try:
            total += rss_bytes(p)
        except (OSError, RuntimeError):
            pass
    return total


def descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def cpu_seconds(pid: int) -> float:
    """utime + stime of ``pid`` from ``/proc/<pid>/stat``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # fields 14 and 15 of stat(5)


def dir_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.exists() else 0


def machine_facts() -> dict[str, Any]:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.partition(":")[2].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        mem = Path("/proc/meminfo").read_text().splitlines()[0].split(":")[1].strip()
    except (OSError, IndexError):
        pass
    return {
        "cpu_count": os.cpu_count(),
        "cpu_affinity": len(os.sched_getaffinity(0)),
        "cpu_model": model,
        "memory": mem,
        "kernel": platform.release(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
    }


def tool_version(cmd: list[str]) -> str:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unavailable: {exc}"
    return (out.stdout or out.stderr).strip().splitlines()[0] if (out.stdout or out.stderr).strip() else ""
