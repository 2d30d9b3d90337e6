"""Which recorded events one subscription sends: its kinds, its path globs, what its channel may see.

Path globs match like ``deny_paths`` (:func:`~vaultd.policy.paths.matching_glob`), and an event
passes when any path it names matches; events naming no path (index, vault and state events)
pass every path filter. A channel for which a vault's ``private_paths`` do not exist (agents)
never gets an event that names a private path, whatever its filters.

Every event is weighed by every subscription, so what one costs is bounded daemon-wide: the
subscriptions with the same globs (in any order) share one :class:`PathFilter`, whose globs are
compiled into one regular expression (:class:`~vaultd.policy.glob_match.GlobSet`) and whose
answers are remembered per path; and the distinct filters together hold at most
``MAX_FILTER_GLOBS`` globs (a subscribe past that is refused, LIMIT). An event therefore costs at
most that many glob matches, each linear in the path, however many subscribers follow it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import anyio

from protocol.methods.events import ALWAYS_DELIVERED, NOTE_KINDS, EventKind
from protocol.methods.subscriptions import MAX_FILTER_GLOBS
from vaultd.errors import LimitExceeded
from vaultd.policy.glob_match import GlobSet
from vaultd.policy.paths import path_key
from vaultd.policy.visibility import Visibility

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from protocol.methods.common import Channel
    from protocol.methods.vaults import VaultEntry
    from vaultd.events.log import Record

_STATES = frozenset({EventKind.STATE_ENTER, EventKind.STATE_LEAVE})
#: Paths whose answer one filter remembers (dropped whole past this; note events repeat paths).
MAX_REMEMBERED: Final = 1 << 16
MAX_PREPARED: Final = 64  #: compiled glob sets waiting for their subscribe to take them


class PathFilter:
    """One set of globs, compiled once, shared by every subscription that names it."""

    __slots__ = ("_seen", "globs", "key", "matcher", "users")

    def __init__(self, key: tuple[str, ...], matcher: GlobSet) -> None:
        self.key = key
        self.globs = matcher.globs
        self.matcher = matcher
        self.users = 0
        self._seen: dict[str, bool] = {}

    def matches(self, path: str) -> bool:
        known = self._seen.get(path)
        if known is None:
            if len(self._seen) >= MAX_REMEMBERED:
                self._seen.clear()
            known = self._seen[path] = self.matcher.matches(path)
        return known


class PathFilters:
    """The distinct path filters of the daemon's subscriptions, and the bound on their globs."""

    def __init__(self, max_globs: int = MAX_FILTER_GLOBS) -> None:
        self.max_globs = max_globs
        self._filters: dict[tuple[str, ...], PathFilter] = {}
        self._prepared: dict[tuple[str, ...], GlobSet] = {}  #: compiled off the loop, not yet acquired
        self.globs = 0  #: globs held by the distinct filters: what one event may cost in matches

    def __len__(self) -> int:
        return len(self._filters)

    async def prepare(self, globs: Sequence[str]) -> None:
        """Compile globs no filter holds yet in a worker thread (tens of milliseconds for 64 of
        them), so :meth:`acquire` on the event loop finds them compiled.

        Raises:
            LimitExceeded: LIMIT when they could not be acquired now anyway.
        """
        key = _key(globs)
        if not key or key in self._filters or key in self._prepared:
            return
        self._check_room(key)
        matcher = await anyio.to_thread.run_sync(GlobSet, key)
        if len(self._prepared) >= MAX_PREPARED:
            self._prepared.clear()
        self._prepared[key] = matcher

    def _check_room(self, key: tuple[str, ...]) -> None:
        """Keep the daemon-wide count of distinct globs bounded: every event is matched against all
        of them.

        Raises:
            LimitExceeded: LIMIT, these globs would pass ``max_globs``; nothing is added.
        """
        if self.globs + len(key) > self.max_globs:
            raise LimitExceeded(
                f"the daemon's subscriptions already match {self.globs:,} distinct path globs and these {len(key)} would pass "
                f"{self.max_globs:,}, the most an event is matched against; subscribe with fewer or shared paths, "
                "or unsubscribe first"
            )

    def acquire(self, globs: Sequence[str]) -> PathFilter:
        """The filter of these globs, shared when another subscription has it.

        Raises:
            LimitExceeded: LIMIT when a new filter would take the daemon past ``max_globs``.
        """
        key = _key(globs)
        found = self._filters.get(key)
        if found is None:
            self._check_room(key)
            matcher = self._prepared.pop(key, None) or GlobSet(key)
            found = self._filters[key] = PathFilter(key, matcher)
            self.globs += len(key)
        found.users += 1
        return found

    def release(self, found: PathFilter) -> None:
        found.users -= 1
        if found.users <= 0 and self._filters.get(found.key) is found:
            del self._filters[found.key]
            self.globs -= len(found.key)


def _key(globs: Sequence[str]) -> tuple[str, ...]:
    """Globs as a filter is shared by: normalized like the matching, in any order, each once."""
    return tuple(sorted({path_key(g).strip("/") for g in globs}))


#: The daemon's one set of path filters (one process, one event loop).
PATH_FILTERS: Final = PathFilters()


class EventFilter:
    """A subscription's filter; :meth:`close` gives its path filter back when it ends.

    Raises:
        LimitExceeded: LIMIT when its globs would take the daemon's filters past their bound.
    """

    def __init__(
        self, kinds: Iterable[EventKind] | None, globs: Sequence[str], channel: Channel, filters: PathFilters = PATH_FILTERS
    ) -> None:
        chosen = None if kinds is None else frozenset(kinds)
        if chosen is not None:
            chosen |= ALWAYS_DELIVERED | (_STATES if chosen & NOTE_KINDS else frozenset())
        self.kinds = chosen
        self.globs = tuple(globs)
        self.channel = channel
        self._filters = filters
        self._paths = filters.acquire(self.globs) if self.globs else None

    def close(self) -> None:
        if self._paths is not None:
            self._filters.release(self._paths)
            self._paths = None

    def passes(self, entry: VaultEntry, record: Record) -> bool:
        if self.kinds is not None and record.kind not in self.kinds:
            return False
        if not record.paths:
            return True
        view = Visibility.of(entry, self.channel)
        if view.hides_anything and any(view.hidden(p) for p in record.paths):
            return False
        paths = self._paths
        if paths is None:
            return not self.globs  # no path filter, or one already given back (nothing is sent then)
        return any(paths.matches(p) for p in record.paths)
