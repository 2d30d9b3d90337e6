"""Fault injection for the write path and the index build: named points and injected I/O errors.

Off unless configured. The one switch is the ``VAULTD_FAULTS`` environment variable, read once
when the daemon starts (documented in docs/reliability.md), so production code never asks
whether it is under test. Grammar, ``;``-separated:

    crash=POINT          SIGKILL the daemon when POINT is reached
    crash=POINT@N        ... the Nth time POINT is reached (1-based)
    error=OP:ERRNO@N     make the Nth call of primitive OP fail with ERRNO (e.g. fsync:EIO@1)
    sleep=POINT:SECONDS  sleep SECONDS (at most 10) every time POINT is reached; POINT@N: the Nth time
    pause=POINT@N:PATH   the Nth time POINT is reached, create PATH and wait until it is removed
                         (at most 120 s), so a test can act at that point and then release it

Crash points: ``after-plan`` (planned and validated in its worker thread, nothing written),
``after-journal`` (journal durable, no target touched), ``after-rename`` (after each
target rename; with @N after the Nth), ``before-commit`` (all targets written, no marker),
``after-commit``, ``between-vaults`` (an operation over several vaults wrote the first vault's
targets, not yet the next one's), ``between-commit-markers`` (its commit point, the first vault's
marker, written; the other vaults' not yet), ``during-recovery`` (after the first file recovery restores), ``during-prune``
(a pruned journal renamed out of the live namespace and synced, not yet deleted),
``build-chunk`` (an index build parsed one more chunk of notes; its progress counts them),
``build-names`` (an index build's note table is whole, and the first build's is published to the
reads of the table alone; the name maps of the notes taken from the cache not yet filled),
``build-settle`` (the first build returned, its index the table's; the watcher's changes during
the build not yet applied, the index not yet ready),
``communities-worker`` (in the worker process that solves a large vault's communities, its
input read; a pause there holds Leiden while the daemon goes on),
``lint-rules`` (a lint's snapshot built from its copy of the index and its canvases read, the
rules not yet run; a pause there holds the lint, with the index free; a large vault's lint
reaches it in its worker process, where a crash kills the worker, not the daemon; the daemon
counts the hits of a point reached in a worker as its own, so ``pause=lint-rules@2`` holds the
second lint wherever it runs),
``lint-fixes-found`` (``lint.fix`` found its fixes on its copy of the index, the vault's writer not
yet taken: a pause there lets a test edit a note before the fixes are planned),
``tidy-rules`` and ``tidy-scanned`` (``vault.tidy``'s copy of the index taken, its rules not yet
run over it; then run, the vault's writer not yet taken),
``graph-snapshot`` (a graph read's snapshot built from its copy of the index, its answer not yet
made; a pause there holds the read, with the index free),
``git-after-commit-tree`` (a checkpoint's commit object written, the branch not moved),
``git-after-update-ref`` (the branch moved, vaultd's record of it not yet written), and a sync's:
``sync-after-fetch`` (origin fetched, nothing integrated, the writer not held),
``sync-after-integrate`` (the integration's writes committed, the branch not moved, no proposal
stored), ``sync-after-update-ref`` (the branch moved, the person's index not yet following it)
and ``sync-after-follow`` (the index follows, the conflicts' proposals not yet stored),
``meaning-fresh`` (the meaning model's fresh lane holds a written note's new passages, none
embedded yet: a pause there holds their embedding while the daemon goes on),
``meaning-batch`` (in the meaning model's worker process, a batch of passages received, none
embedded yet; counted in each worker process: a pause there holds the filler mid-batch),
``meaning-passage`` (in that worker, one of its threads took a passage of the batch, not yet
embedded; counted in each worker process: a pause there holds that thread, the others go on).
Primitives: ``write``, ``fsync``, ``rename``, ``fsync-dir``, ``unlink``.
"""

from __future__ import annotations

import errno
import os
import signal
import time
from dataclasses import dataclass, field

CRASH_POINTS = frozenset(
    {
        "after-plan",
        "after-journal",
        "after-rename",
        "before-commit",
        "after-commit",
        "between-vaults",
        "between-commit-markers",
        "during-recovery",
        "during-prune",
        "git-after-commit-tree",
        "git-after-update-ref",
        "sync-after-fetch",
        "sync-after-integrate",
        "sync-after-update-ref",
        "sync-after-follow",
        "build-chunk",
        "build-names",
        "build-settle",
        "communities-worker",
        "lint-rules",
        "graph-snapshot",
        "lint-fixes-found",
        "tidy-rules",
        "tidy-scanned",
        "meaning-fresh",
        "meaning-batch",
        "meaning-passage",
    }
)
PRIMITIVES = frozenset({"write", "fsync", "rename", "fsync-dir", "unlink"})
MAX_SLEEP_SECONDS = 10.0
MAX_PAUSE_SECONDS = 120.0
EVERY = 0  #: a hit number meaning every hit


@dataclass
class FaultPlan:
    crashes: dict[str, int] = field(default_factory=dict)  #: point -> the hit that crashes
    errors: dict[str, tuple[int, int]] = field(default_factory=dict)  #: primitive -> (errno, hit)
    sleeps: dict[str, tuple[int, float]] = field(default_factory=dict)  #: point -> (hit or EVERY, seconds)
    pauses: dict[str, tuple[int, str]] = field(default_factory=dict)  #: point -> (hit, gate file)
    _hits: dict[str, int] = field(default_factory=dict)

    @classmethod
    def parse(cls, spec: str) -> FaultPlan:
        plan = cls()
        for item in filter(None, (s.strip() for s in spec.split(";"))):
            kind, _, rest = item.partition("=")
            if kind in ("sleep", "pause"):
                plan._parse_wait(kind, rest, item)
                continue
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
            else:
                raise ValueError(f"bad fault {item!r}")
        return plan

    def _parse_wait(self, kind: str, rest: str, item: str) -> None:
        where, _, arg = rest.partition(":")
        what, _, nth = where.partition("@")
        if what not in CRASH_POINTS or not arg or (nth and not nth.isdigit()):
            raise ValueError(f"bad fault {item!r}")
        if kind == "sleep":
            try:
                seconds = float(arg)
            except ValueError:
                raise ValueError(f"bad fault {item!r}") from None
            if not 0 <= seconds <= MAX_SLEEP_SECONDS:
                raise ValueError(f"bad fault {item!r}: sleep at most {MAX_SLEEP_SECONDS} s")
            self.sleeps[what] = (int(nth) if nth else EVERY, seconds)
        else:
            self.pauses[what] = (int(nth) if nth else 1, arg)

    def _count(self, key: str) -> int:
        self._hits[key] = self._hits.get(key, 0) + 1
        return self._hits[key]

    def point(self, name: str) -> None:
        if name in self.sleeps:
            hit, seconds = self.sleeps[name]
            if self._count("sleep:" + name) == hit or hit == EVERY:
                time.sleep(seconds)
        if name in self.pauses:
            hit, gate = self.pauses[name]
            if self._count("pause:" + name) == hit:
                _wait_at(gate)
        if name in self.crashes and self._count("crash:" + name) == self.crashes[name]:
            os.kill(os.getpid(), signal.SIGKILL)

    def for_worker(self, name: str) -> str:
        """The faults of a worker process that reaches ``name`` once, counted here: the Nth
        worker sent to that point gets the faults of the Nth hit, each as its first."""
        parts = []
        if name in self.sleeps:
            hit, seconds = self.sleeps[name]
            if self._count("sleep:" + name) == hit or hit == EVERY:
                parts.append(f"sleep={name}:{seconds}")
        if name in self.pauses:
            hit, gate = self.pauses[name]
            if self._count("pause:" + name) == hit:
                parts.append(f"pause={name}@1:{gate}")
        if name in self.crashes and self._count("crash:" + name) == self.crashes[name]:
            parts.append(f"crash={name}@1")
        return ";".join(parts)

    def io(self, op: str) -> None:
        if op in self.errors:
            code, hit = self.errors[op]
            if self._count("io:" + op) == hit:
                raise OSError(code, f"{os.strerror(code)} (injected)")


def _wait_at(gate: str) -> None:
    """Hold the write here until whoever watches ``gate`` removes it."""
    with open(gate, "x"):
        pass
    deadline = time.monotonic() + MAX_PAUSE_SECONDS
    while os.path.exists(gate) and time.monotonic() < deadline:
        time.sleep(0.01)


_active = FaultPlan()


def configure(spec: str | None) -> None:
    """Install the faults named by ``spec`` (the value of VAULTD_FAULTS), or none."""
    global _active
    _active = FaultPlan.parse(spec) if spec else FaultPlan()


def point(name: str) -> None:
    _active.point(name)


def for_worker(name: str) -> str:
    """The ``VAULTD_FAULTS`` of a worker process that will reach the point ``name`` (see
    :meth:`FaultPlan.for_worker`); empty when none applies."""
    return _active.for_worker(name)


def io(op: str) -> None:
    _active.io(op)
