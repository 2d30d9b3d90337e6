"""What lint reads and what it reports: its input (a snapshot and the vault's settings, the date)
and its findings, each with the mechanical fix where one is safe."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from protocol.methods.lint import MAX_LINT_SECONDS
from protocol.methods.vaults import FolderRoles, SchemaProfile
from vaultd.errors import LimitExceeded

if TYPE_CHECKING:
    import datetime as dt
    from collections.abc import Callable, Mapping

    from protocol.methods.lint import LintCode, LintLevel
    from vaultd.graph.snapshot import LinkSnapshot, Resolved
    from vaultd.vault.link_targets import Resolution


def overran(seconds: float) -> str:
    """What a lint past its bound answers (LIMIT), wherever it ran."""
    return f"the lint ran past its {seconds:g} s bound and stopped; lint one rule at a time (code)"


class Deadline:
    """When a lint's walk must stop. The rules :meth:`tick` once per note, link or card; every
    :data:`CHECK_EVERY` ticks the clock is read, and past the time the walk ends with LIMIT, so
    no vault, however large or strange, keeps a lint (and its turn at vault-wide work) for long.
    """

    __slots__ = ("_at", "_clock", "_ticks", "seconds")
    CHECK_EVERY = 256  #: ticks between two readings of the clock (a reading costs more than a tick)

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self._clock = clock
        self._at = clock() + seconds
        self._ticks = 0

    @classmethod
    def never(cls) -> Deadline:
        return cls(math.inf)

    @classmethod
    def for_lint(cls) -> Deadline:
        """A ``vault.lint``'s: :data:`~protocol.methods.lint.MAX_LINT_SECONDS` from now."""
        return cls(MAX_LINT_SECONDS)

    @classmethod
    def at(cls, when: float, seconds: float) -> Deadline:
        """A deadline at ``when`` on :func:`time.monotonic` (one clock for every process of the
        machine, so a worker process stops when its caller's deadline passes), told as a
        ``seconds`` bound."""
        deadline = cls(seconds)
        deadline._at = when
        return deadline

    @property
    def when(self) -> float:
        """The :func:`time.monotonic` reading past which the walk stops."""
        return self._at

    def left(self) -> float:
        """Seconds left (0 once past)."""
        return max(0.0, self._at - self._clock())

    def tick(self) -> None:
        """One step of the walk (a note, a link, a card).

        Raises:
            LimitExceeded: LIMIT, the time is up (read at every CHECK_EVERY-th step).
        """
        self._ticks += 1
        if self._ticks % self.CHECK_EVERY == 0:
            self.check()

    def check(self) -> None:
        """Stop the walk once the time is up.

        Raises:
            LimitExceeded: LIMIT, the time is up.
        """
        if self._clock() >= self._at:
            raise LimitExceeded(overran(self.seconds))


@dataclass(frozen=True, slots=True)
class Fix:
    """Replace ``old`` at ``start:end`` of the note's text (as indexed) by ``new``."""

    path: str
    line: int
    start: int
    end: int
    old: str
    new: str

    def __str__(self) -> str:
        return f"{self.old} → {self.new}"


@dataclass(frozen=True, slots=True)
class Finding:
    code: LintCode
    note: str
    message: str
    line: int | None = None
    fix: Fix | None = None
    hint: str | None = None  #: a dead link's text, to look a likely title up for (see ``engine.with_hints``)
    #: For a fixable link: (the link, the note to point it at, the new target text); the ``fix``
    #: is made from the note's text only for the findings that need it (``links.make_fix``).
    repair: tuple[Resolved, str, str] | None = None

    @property
    def fixable(self) -> bool:
        return self.repair is not None

    @property
    def level(self) -> LintLevel:
        return self.code.level


@dataclass(frozen=True, slots=True)
class Document:
    """A ``.canvas`` or ``.base`` file as read and parsed before the rules run (with the index not
    held, each parse bounded): its data, or the finding that says why there is none."""

    data: Any = None
    problem: str | None = None  #: the finding's text when the file could not be read or parsed


@dataclass(frozen=True, slots=True)
class LintInput:
    snap: LinkSnapshot  #: what the caller may see
    as_of: dt.date
    schema: SchemaProfile = SchemaProfile.OPEN
    stamp_keys: tuple[str, ...] = ("updated",)
    domains: tuple[str, ...] = ()  #: the domains the vault declares on top of the built-ins
    roles: FolderRoles | None = None  #: the vault's folder roles, which set what lint reports where
    resolve: Callable[[str, str], Resolution] | None = None  #: the vault's resolver (every file)
    exists: Callable[[str], bool] = lambda _p: False  #: whether a vault-relative file exists (private ones too)
    suggest: Callable[[str], str | None] = lambda _t: None  #: a dead link's likely title, among visible notes
    by_alias: Callable[[str], list[str]] = lambda _a: []  #: visible notes carrying an alias
    documents: Mapping[str, Document] = field(default_factory=dict)  #: .canvas and .base files by path
    edited_generated: tuple[str, ...] = ()  #: visible notes vaultd generates that a person has edited since
    unread_documents: int = 0  #: .canvas and .base files past the bound, not read (so not in ``documents``)
    memo: dict[str, dict[str, str]] = field(default_factory=dict)  #: answers a lint computes once (link texts)
    deadline: Deadline = field(default_factory=Deadline.never)  #: when the rules must stop (LIMIT)
