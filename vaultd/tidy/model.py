"""What a tidy rule works on and what it answers: the note's text as it goes from rule to rule, and
the records of what changed and what was left for a person."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from vaultd.policy.secrets import scan_secrets
from vaultd.vault import frontmatter

if TYPE_CHECKING:
    from collections.abc import Callable

    from protocol.issue_codes import IssueCode

MARKER = "[redacted]"  #: what a redacted secret (or an echoed value that looks like one) becomes


@dataclass(frozen=True, slots=True)
class Record:
    """One change a rule made, or one thing it found and left; ``what`` never holds a secret."""

    code: IssueCode
    path: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.code} {self.path}:{self.line} {self.what}"


@dataclass(slots=True)
class Work:
    """A note on its way through the rules: its path, its text now, and the records so far."""

    path: str
    text: str
    typed: bool  #: the vault's schema is the typed profile (most rules are its own)
    #: whether a link target resolves to a note from this one (for links moved into the body)
    resolves: Callable[[str], bool] = lambda _t: False
    changes: list[Record] = field(default_factory=list)
    reported: list[Record] = field(default_factory=list)
    _parsed: tuple[str, frontmatter.FrontmatterParse] | None = None

    def parsed(self) -> frontmatter.FrontmatterParse:
        """The header of the text as it is now, parsed once per version of the text."""
        if self._parsed is None or self._parsed[0] is not self.text:
            self._parsed = (self.text, frontmatter.parse(self.text))
        return self._parsed[1]

    def changed(self, code: IssueCode, line: int, what: str) -> None:
        self.changes.append(Record(code, self.path, line, what))

    def report(self, code: IssueCode, line: int, what: str) -> None:
        self.reported.append(Record(code, self.path, line, what))

    def line_of(self, offset: int) -> int:
        return self.text.count("\n", 0, offset) + 1


def shown(value: object) -> str:
    """A value as a record echoes it: short, one line, and [redacted] when it looks like a secret."""
    text = str(value)
    if scan_secrets(text):
        return MARKER
    text = text.replace("\n", " ").replace("\r", " ")
    return text if len(text) <= 80 else text[:79] + "…"
