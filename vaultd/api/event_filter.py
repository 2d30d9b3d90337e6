"""Which recorded events one subscription sends: its kinds, its path globs, what its channel may see.

Path globs match like ``deny_paths`` (:func:`~vaultd.policy.paths.matching_glob`), and an event
passes when any path it names matches; events naming no path (index, vault and state events)
pass every path filter. A channel for which a vault's ``private_paths`` do not exist (agents)
never gets an event that names a private path, whatever its filters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol.methods.events import ALWAYS_DELIVERED, NOTE_KINDS, EventKind
from vaultd.policy.paths import matching_glob
from vaultd.policy.visibility import Visibility

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from protocol.methods.common import Channel
    from protocol.methods.vaults import VaultEntry
    from vaultd.events.log import Record

_STATES = frozenset({EventKind.STATE_ENTER, EventKind.STATE_LEAVE})


class EventFilter:
    def __init__(self, kinds: Iterable[EventKind] | None, globs: Sequence[str], channel: Channel) -> None:
        chosen = None if kinds is None else frozenset(kinds)
        if chosen is not None:
            chosen |= ALWAYS_DELIVERED | (_STATES if chosen & NOTE_KINDS else frozenset())
        self.kinds = chosen
        self.globs = tuple(globs)
        self.channel = channel

    def passes(self, entry: VaultEntry, record: Record) -> bool:
        if self.kinds is not None and record.kind not in self.kinds:
            return False
        if not record.paths:
            return True
        view = Visibility.of(entry, self.channel)
        if view.hides_anything and any(view.hidden(p) for p in record.paths):
            return False
        return not self.globs or any(matching_glob(p, self.globs) is not None for p in record.paths)
