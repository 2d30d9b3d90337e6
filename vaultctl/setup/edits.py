"""The shape every config format's editor shares: find the entry, splice it in, splice it out.

Every change is one :class:`Splice` of the file's text, so the bytes before and after it are
untouched by construction; each editor then re-parses its result and checks that the data
changed exactly as intended, refusing rather than writing anything else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pathlib import Path


@dataclass(frozen=True, slots=True)
class Splice:
    """Replace ``text[start:end]`` with ``new``."""

    start: int
    end: int
    new: str

    def apply(self, text: str) -> str:
        return text[: self.start] + self.new + text[self.end :]


@dataclass(frozen=True, slots=True)
class Found:
    """The ``vaultd`` entry a file holds (a wrapper, so that a null entry is not "absent")."""

    value: Any


@dataclass(frozen=True, slots=True)
class Put:
    """How an entry was put in, and what undo needs to take it out byte for byte."""

    splice: Splice
    prior_text: str | None  #: the exact text the entry had before, None when it had none
    container_existed: bool  #: the ``mcpServers`` / ``mcp_servers`` table was there before
    spacing: str | None  #: text the insertion replaced or led with (whitespace only), for undo


class Document(Protocol):
    """A parsed host config, able to plan the two edits setup makes."""

    path: Path
    text: str

    def entry(self) -> Found | None:
        """The ``vaultd`` entry, or None when the file has none."""
        ...

    def put(self, entry: dict[str, Any]) -> Put:
        """Plan setting the entry (adding it or replacing its value)."""
        ...

    def revert(self, prior_text: str | None, container_existed: bool, spacing: str | None) -> Splice:
        """Plan giving the entry back its prior text, or removing it when it had none."""
        ...


class Format(Protocol):
    """A config file format: how to read one and how to write a fresh one."""

    def parse(self, text: str, path: Path) -> Document:
        """Parse and validate; raises MalformedConfig without quoting the text."""
        ...

    def fresh(self, entry: dict[str, Any]) -> str:
        """The whole text of a new file holding only the entry."""
        ...

    def manual(self, entry: dict[str, Any], text: str | None) -> str:
        """What to add by hand when setup refuses to edit ``text`` (None: unreadable): valid for
        the file as it is."""
        ...

    def value_of(self, text: str) -> Any:
        """The data a :attr:`Put.prior_text` stands for (to show a record's prior entry)."""
        ...


def expected_data(data: dict[str, Any], container: str, name: str, value: Any, *, present: bool, drop_empty: bool) -> dict[str, Any]:
    """What a host file must parse to after an edit: ``data`` with only the ``name`` entry of
    ``container`` set (``present``) or removed; an emptied container goes when ``drop_empty``.
    Each editor re-parses its result and compares with this, so a textual edit can never change
    anything else unnoticed."""
    expected = dict(data)
    servers = dict(expected.get(container) or {})
    if present:
        servers[name] = value
    else:
        servers.pop(name, None)
    if servers or not drop_empty:
        expected[container] = servers
    else:
        expected.pop(container, None)
    return expected
