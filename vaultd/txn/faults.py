"""Fault injection for the write path: named crash points and injected I/O errors.

Off unless configured. The one switch is the ``VAULTD_FAULTS`` environment variable, read once
when the daemon starts (documented in docs/reliability.md), so production code never asks
whether it is under test. Grammar, ``;``-separated:

    crash=POINT          SIGKILL the daemon when POINT is reached
    crash=POINT@N        ... the Nth time POINT is reached (1-based)
    error=OP:ERRNO@N     make the Nth call of primitive OP fail with ERRNO (e.g. fsync:EIO@1)
    sleep=POINT:SECONDS  pause the write SECONDS (at most 600) when POINT is reached (a slow disk)
    sleep=POINT:SECONDS@N  ... the Nth time POINT is reached

Crash points: ``after-journal`` (journal durable, no target touched), ``after-rename`` (after each
target rename; with @N after the Nth), ``before-commit`` (all targets written, no marker),
``after-commit``, ``during-recovery`` (after the first file recovery restores).
Primitives: ``write``, ``fsync``, ``rename``, ``fsync-dir``, ``unlink``.
"""

from __future__ import annotations

import errno
import os
import signal
import time
from dataclasses import dataclass, field

CRASH_POINTS = frozenset({"after-journal", "after-rename", "before-commit", "after-commit", "during-recovery"})
PRIMITIVES = frozenset({"write", "fsync", "rename", "fsync-dir", "unlink"})
MAX_SLEEP_S = 600.0


@dataclass
class FaultPlan:
    crashes: dict[str, int] = field(default_factory=dict)  #: point -> the hit that crashes
    errors: dict[str, tuple[int, int]] = field(default_factory=dict)  #: primitive -> (errno, hit)
    sleeps: dict[str, tuple[float, int]] = field(default_factory=dict)  #: point -> (seconds, hit)
    _hits: dict[str, int] = field(default_factory=dict)

    @classmethod
    def parse(cls, spec: str) -> FaultPlan:
        plan = cls()
        for item in filter(None, (s.strip() for s in spec.split(";"))):
            kind, _, rest = item.partition("=")
            what, _, nth = rest.partition("@")
            hit = int(nth) if nth else 1
            if kind == "crash" and what in CRASH_POINTS:
                plan.crashes[what] = hit
            elif kind == "error":
                op, _, name = what.partition(":")
                code = getattr(errno, name, None)
                if op not in PRIMITIVES or not isinstance(code, int):
                    raise ValueError(f"bad fault {item!r}")
                plan.errors[op] = (code, hit)
            elif kind == "sleep":
                where, _, seconds = what.partition(":")
                try:
                    pause = float(seconds)
                except ValueError:
                    pause = -1.0
                if where not in CRASH_POINTS or not 0 <= pause <= MAX_SLEEP_S:
                    raise ValueError(f"bad fault {item!r}")
                plan.sleeps[where] = (pause, hit)
            else:
                raise ValueError(f"bad fault {item!r}")
        return plan

    def _count(self, key: str) -> int:
        self._hits[key] = self._hits.get(key, 0) + 1
        return self._hits[key]

    def point(self, name: str) -> None:
        if name in self.sleeps:
            pause, hit = self.sleeps[name]
            if self._count("sleep:" + name) == hit:
                time.sleep(pause)
        if name in self.crashes and self._count("crash:" + name) == self.crashes[name]:
            os.kill(os.getpid(), signal.SIGKILL)

    def io(self, op: str) -> None:
        if op in self.errors:
            code, hit = self.errors[op]
            if self._count("io:" + op) == hit:
                raise OSError(code, f"{os.strerror(code)} (injected)")


_active = FaultPlan()


def configure(spec: str | None) -> None:
    """Install the faults named by ``spec`` (the value of VAULTD_FAULTS), or none."""
    global _active
    _active = FaultPlan.parse(spec) if spec else FaultPlan()


def point(name: str) -> None:
    _active.point(name)


def io(op: str) -> None:
    _active.io(op)
