"""The handler table: binds each method spec of the protocol table to the daemon function that
answers it, and the context every handler is called with.

A handler is ``async def h(ctx: CallContext, params: P) -> R`` registered with
``@handles(SPEC)`` for a ``MethodSpec[P, R]``, so the type checker holds the function to the
spec's types and a test holds its annotations to them too. ``check_complete`` runs at start-up
so a method declared but not handled is a start-up failure, not a surprise for the first caller.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from protocol.methods.common import Channel, Params
from protocol.table import METHODS, MethodSpec

if TYPE_CHECKING:
    from vaultd.api.host import Host
    from vaultd.api.streams import EventStreams


@dataclass(slots=True)
class CallContext:
    """Who is calling, and the daemon as a handler may see it."""

    host: Host
    channel: Channel
    client: str
    session: str | None = None  #: an agent session's id, from hello
    opened: bool = False  #: set by the hello handler once the connection is accepted
    streams: EventStreams | None = None  #: the connection's subscriptions (None: it cannot carry notifications)


P = TypeVar("P", bound=Params)
R = TypeVar("R")

Handler = Callable[[CallContext, Any], Awaitable[Any]]
HANDLERS: dict[str, Handler] = {}


def handles(spec: MethodSpec[P, R]) -> Callable[[Callable[[CallContext, P], Awaitable[R]]], Callable[[CallContext, P], Awaitable[R]]]:
    """Register the decorated function as the one handler of ``spec``."""
    if METHODS.get(spec.name) is not spec:
        raise KeyError(f"{spec.name} is not in the protocol method table")

    def register(fn: Callable[[CallContext, P], Awaitable[R]]) -> Callable[[CallContext, P], Awaitable[R]]:
        if spec.name in HANDLERS:
            raise KeyError(f"{spec.name} has two handlers")
        HANDLERS[spec.name] = fn
        return fn

    return register


def check_complete() -> None:
    missing = sorted(set(METHODS) - set(HANDLERS))
    if missing:
        raise RuntimeError(f"methods without a handler: {', '.join(missing)}")
