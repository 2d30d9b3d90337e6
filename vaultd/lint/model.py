"""What lint reads and what it reports: its input (a snapshot and the vault's settings, the date)
and its findings, each with the mechanical fix where one is safe."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from protocol.methods.vaults import SchemaProfile

if TYPE_CHECKING:
    import datetime as dt
    from collections.abc import Callable, Mapping

    from protocol.methods.lint import LintCode, LintLevel
    from vaultd.graph.snapshot import LinkSnapshot, Resolved
    from vaultd.vault.link_targets import Resolution


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
    resolve: Callable[[str, str], Resolution] | None = None  #: the vault's resolver (every file)
    exists: Callable[[str], bool] = lambda _p: False  #: whether a vault-relative file exists (private ones too)
    suggest: Callable[[str], str | None] = lambda _t: None  #: a dead link's likely title, among visible notes
    by_alias: Callable[[str], list[str]] = lambda _a: []  #: visible notes carrying an alias
    documents: Mapping[str, Document] = field(default_factory=dict)  #: .canvas and .base files by path
    unread_documents: int = 0  #: .canvas and .base files past the bound, not read (so not in ``documents``)
    memo: dict[str, dict[str, str]] = field(default_factory=dict)  #: answers a lint computes once (link texts)
