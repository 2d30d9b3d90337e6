"""What the daemon knows that a shell may complete: vault ids, note names, op and proposal ids.

A Tab press must never start a daemon, wait long or print an error into the command line, so
each source connects without autostart, waits at most :data:`WAIT_S` for a reply, and answers
nothing when the daemon is down or refuses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol.methods import proposals, vaults, writes
from protocol.methods.common import Empty
from protocol.methods.names import NOTE_NAMES, NamesParams
from protocol.methods.proposals import ProposalListParams
from protocol.methods.writes import OpListParams
from vaultctl import vault_choice
from vaultctl.client import BadSetting, CallError, Client, DaemonUnavailable, connect
from vaultctl.completion import Complete

if TYPE_CHECKING:
    from collections.abc import Callable

WAIT_S = 2.0
MAX_ITEMS = 200

Item = tuple[str, str]  #: (value, a few words of help; "" for none)


def _ask(ask: Callable[[Client], list[Item]]) -> list[Item]:
    try:
        with connect(autostart=False, timeout=WAIT_S, client_name="vaultctl-complete") as client:
            return ask(client)
    except (DaemonUnavailable, CallError, BadSetting, OSError):
        return []


def _vault_here(client: Client, explicit: str | None) -> str | None:
    """The vault the command would use (:func:`vaultctl.vault_choice.chosen`)."""
    return vault_choice.chosen(explicit, lambda: client.call(vaults.VAULT_LIST, Empty()).vaults)


def values(kind: Complete, prefix: str, vault: str | None) -> list[Item]:
    """The daemon's answer for ``kind`` starting with ``prefix`` (``vault`` as typed, if given)."""
    if kind is Complete.VAULT:
        return _ask(lambda c: [(v.entry.id, v.entry.path) for v in c.call(vaults.VAULT_LIST, Empty()).vaults])
    if kind is Complete.NOTE:
        return _ask(
            lambda c: [
                (n, "") for n in c.call(NOTE_NAMES, NamesParams(vault=_vault_here(c, vault), prefix=prefix[:1024], limit=MAX_ITEMS)).names
            ]
        )
    if kind is Complete.OP:
        return _ask(
            lambda c: [(o.op_id, o.summary) for o in c.call(writes.OP_LIST, OpListParams(vault=_vault_here(c, vault), limit=50)).ops]
        )
    if kind is Complete.PROPOSAL:
        return _ask(
            lambda c: [
                (p.id, p.summary)
                for p in c.call(proposals.PROPOSAL_LIST, ProposalListParams(vault=_vault_here(c, vault), limit=100)).proposals
            ]
        )
    return []
