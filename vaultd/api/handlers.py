"""Binds method names from the protocol table to the daemon's handler functions.

A handler is ``async def h(ctx: CallContext, params: P) -> R`` with ``P`` and ``R`` the Structs
the table declares. ``check_complete`` runs at start-up so a method declared but not handled is
a start-up failure, not a surprise for the first caller.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from protocol.methods.common import Channel
from protocol.table import METHODS

if TYPE_CHECKING:
    from vaultd.daemon import Daemon


@dataclass(slots=True)
class CallContext:
    daemon: Daemon
    channel: Channel
    client: str
    opened: bool = False  #: set by the hello handler once the session is accepted


Handler = Callable[[CallContext, Any], Awaitable[Any]]
HANDLERS: dict[str, Handler] = {}

F = TypeVar("F", bound=Handler)


def handles(name: str) -> Callable[[F], F]:
    if name not in METHODS:
        raise KeyError(f"{name} is not in the protocol method table")

    def register(fn: F) -> F:
        if name in HANDLERS:
            raise KeyError(f"{name} has two handlers")
        HANDLERS[name] = fn
        return fn

    return register


def check_complete() -> None:
    missing = sorted(set(METHODS) - set(HANDLERS))
    if missing:
        raise RuntimeError(f"methods without a handler: {', '.join(missing)}")
