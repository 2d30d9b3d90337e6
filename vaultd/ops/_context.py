"""What a planner sees: the vault, its index, the caller, and strict reads of current files."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from vaultd.errors import Conflict
from vaultd.obsidian.settings import VaultSettings, read_settings
from vaultd.policy.visibility import Visibility
from vaultd.relink import Relocation, new_link, property_link
from vaultd.txn.engine import read_current, read_state
from vaultd.vault.lookup import find_note

if TYPE_CHECKING:
    import datetime as dt
    from collections.abc import Iterable
    from pathlib import Path

    from protocol.errors import Issue
    from protocol.methods.common import Channel
    from protocol.methods.vaults import VaultEntry
    from vaultd.vault.index import VaultIndex


@dataclass
class OpContext:
    root: Path
    entry: VaultEntry
    index: VaultIndex
    channel: Channel
    now: dt.datetime  #: local time, one clock for stamps and the log line
    warnings: list[Issue] = field(default_factory=list)
    #: The caller's sha256 of the note it edits (whole, or a prefix of at least 12 hex digits, as
    #: receipts print it), checked on first read. A prefix is compared with this one file's sha,
    #: never looked up among others, so it cannot be ambiguous; 48 bits make a false match as
    #: unlikely as a collision needs to be for a "did it change?" check.
    expected_sha: str | None = None
    #: The date stamps record when it is not now's: a proposal's, when a person applies it, so the
    #: note gets the bytes they reviewed (``updated: <the day it was proposed>``).
    stamp_date: str | None = None

    @property
    def visibility(self) -> Visibility:
        """What the caller may see: a note private to its channel is not found, not refused."""
        return Visibility.of(self.entry, self.channel)

    @property
    def today(self) -> str:
        """The date a write stamps (``created``, ``updated``)."""
        return self.stamp_date or self.now.strftime("%Y-%m-%d")

    @property
    def settings(self) -> VaultSettings:
        """The vault's Obsidian settings now (re-read only when a settings file changed)."""
        return read_settings(self.root)

    def link(self, path: str, source: str, *, embed: bool = False, created: Iterable[str] = ()) -> str:
        """A new link to ``path`` written in the body of ``source``, in the vault's link format
        (wiki or Markdown, shortest, relative or absolute path): every link an operation writes
        anew is made here, so every one reads like a link the person's Obsidian would write.

        ``path`` and the files in ``created`` count as the vault's even before the operation
        writes them: the shortest form of a link to a file the same operation creates is its bare
        name when no other file has it, as Obsidian writes it once the file is there."""
        return new_link(self._relocation(path, created), path, source, embed=embed)

    def property_link(self, path: str, source: str, *, created: Iterable[str] = ()) -> str:
        """A new link to ``path`` in a frontmatter property of ``source``: a wiki-link (the only
        kind Obsidian's properties know), its path in the vault's format (``created`` as for
        :meth:`link`)."""
        return property_link(self._relocation(path, created), path, source)

    def _relocation(self, path: str, created: Iterable[str]) -> Relocation:
        return Relocation(self.index.resolver, {}, fmt=self.settings.app.link, created=(path, *created))

    def find(self, target: str) -> str:
        """A strict lookup: path, exact name, or an alias naming one note; never fuzzy."""
        return find_note(self.index, target, self.visibility.hidden)

    def read(self, rel: str) -> bytes | None:
        return read_current(self.root, rel)

    def mode(self, rel: str) -> int | None:
        """The permission bits of ``rel`` now, for a file that takes them along (move, trash)."""
        current = read_state(self.root, rel)
        return None if current is None else current.mode

    def read_target(self, rel: str) -> tuple[bytes, str]:
        """Read the note being edited, refusing with CONFLICT if it is not what the caller read.

        Raises:
            Conflict: CONFLICT, the note's sha no longer starts with the one the caller read.
        """
        data, text = self.read_text(rel)
        if self.expected_sha is not None and not hashlib.sha256(data).hexdigest().startswith(self.expected_sha):
            raise Conflict(f"{rel} changed since you read it (sha256 differs); read it again, then retry")
        return data, text

    def read_text(self, rel: str) -> tuple[bytes, str]:
        """A note's bytes and text as they are now; vaultd edits UTF-8 text only.

        Raises:
            Conflict: CONFLICT, the file was removed since it was indexed, or is not valid UTF-8.
        """
        data = self.read(rel)
        if data is None:
            raise Conflict(f"{rel} was removed since it was indexed; search again")
        try:
            return data, data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise Conflict(f"{rel} is not valid UTF-8; vaultd does not edit it") from exc
