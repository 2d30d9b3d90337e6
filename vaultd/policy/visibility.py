"""Read-side privacy: which notes a channel may see (P04 for a write it may not make).

A vault's ``private_paths`` are globs, matched like ``deny_paths`` (on the normalized key of glob
and path, see :func:`~vaultd.policy.paths.matching_glob`). Notes and files there do not exist for
the channels in :data:`HIDDEN_FROM` (agents, over MCP): every read method filters through one
:class:`Visibility`, and a write there is refused before it is planned, so probing by writing
tells nothing either. People's channels (the CLI, editors) see everything.

A private note still resolves as a link target, so a visible note's link to it is not reported
dead; such a link shows as resolved with no path, and its anchor is not checked (that would tell
what headings the note has).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from protocol.errors import Issue
from protocol.methods.common import Channel
from vaultd.policy.paths import matching_glob

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from protocol.methods.vaults import VaultEntry

#: Channels for which private paths do not exist.
HIDDEN_FROM: Final = frozenset({Channel.MCP})

#: Said instead of the path, so a refusal does not name a note the caller may not see.
PRIVATE_WRITE: Final = "the vault's private_paths keep this path from agents; write it from the CLI"


#: Answers kept per glob set, so a listing of a large vault matches each path once, not per call.
MAX_REMEMBERED: Final = 1 << 18
_SHARED: dict[tuple[str, ...], dict[str, bool]] = {}


class Visibility:
    """What one caller sees of one vault. Answers are cached: read methods ask per note."""

    __slots__ = ("_globs", "_seen")

    def __init__(self, private_globs: Sequence[str]) -> None:
        self._globs = tuple(private_globs)
        # Whether a path is private depends on the path and the globs alone, so every caller
        # with the same globs shares one memo (dropped whole when it grows past its bound).
        if len(_SHARED) > 64:
            _SHARED.clear()
        self._seen = _SHARED.setdefault(self._globs, {}) if self._globs else {}

    @classmethod
    def of(cls, entry: VaultEntry, channel: Channel) -> Visibility:
        return cls(entry.private_paths if channel in HIDDEN_FROM else ())

    @property
    def hides_anything(self) -> bool:
        return bool(self._globs)

    def hidden(self, path: str) -> bool:
        """Whether ``path`` (vault-relative) is private to this caller."""
        if not self._globs:
            return False
        known = self._seen.get(path)
        if known is None:
            if len(self._seen) >= MAX_REMEMBERED:
                self._seen.clear()
            known = self._seen[path] = matching_glob(path, self._globs) is not None
        return known

    def visible(self, path: str) -> bool:
        return not self.hidden(path)

    def only_visible(self, paths: Iterable[str]) -> list[str]:
        return [p for p in paths if not self.hidden(p)]

    def write_issue(self, path: str) -> Issue | None:
        """P04 for a write this caller may not make; the issue does not carry the path."""
        return Issue(code="P04", message=PRIVATE_WRITE) if self.hidden(path) else None
