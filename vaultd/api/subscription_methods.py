"""subscribe and unsubscribe: where a subscription starts in each vault's events, and its filter.

Everything from reading each vault's clock to registering the subscription happens in one step
on the event loop, with no wait in between, so no event can fall between the clocks the reply
names and the first event sent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol.errors import Issue
from protocol.issue_codes import IssueCode
from protocol.methods import subscriptions
from protocol.methods.subscriptions import SubscribeParams, SubscribeResult, UnsubscribeParams, UnsubscribeResult, VaultClock
from vaultd.api.event_filter import PATH_FILTERS, EventFilter
from vaultd.api.handlers import CallContext, handles
from vaultd.api.streams import SubscriptionStart
from vaultd.errors import InvalidParams, Unavailable

if TYPE_CHECKING:
    from vaultd.events.log import EventLog


@handles(subscriptions.SUBSCRIBE)
async def subscribe(ctx: CallContext, params: SubscribeParams) -> SubscribeResult:
    """Start a stream of change notifications on this connection, from now or from a cursor.

    Raises:
        Unavailable: UNAVAILABLE, the connection cannot carry notifications.
        InvalidParams: INVALID_PARAMS, ``since`` names a vault the subscription does not follow.
    """
    if ctx.streams is None:
        raise Unavailable("this connection cannot carry notifications")
    host = ctx.host
    runtimes = list(host.vaults.values()) if params.vaults is None else [host.vault(v) for v in dict.fromkeys(params.vaults)]
    followed = {r.entry.id for r in runtimes}
    stray = sorted(set(params.since) - followed)
    if stray:
        message = f"since names vault {stray[0]!r}, which this subscription does not follow (or which is not registered)"
        raise InvalidParams(message, issues=[Issue(code=IssueCode.PARAM, message=message, path="$.params.since")])
    await PATH_FILTERS.prepare(params.paths)  # compiled off the loop; from here on nothing waits
    starts: dict[str, tuple[EventLog, int]] = {}
    clocks = []
    for runtime in runtimes:
        log = runtime.events
        token = params.since.get(runtime.entry.id)
        resumed = None if token is None else log.resume(token)
        start = log.head if resumed is None else resumed
        starts[runtime.entry.id] = (log, start)
        clocks.append(
            VaultClock(
                vault=runtime.entry.id, clock=log.clock, fresh_instance=token is not None and resumed is None, replay=log.head - start
            )
        )
    start_at = SubscriptionStart(
        vaults=None if params.vaults is None else frozenset(followed),
        filter=EventFilter(params.kinds, params.paths, ctx.channel),
        settle_s=params.settle_ms / 1000,
        starts=starts,
    )
    return SubscribeResult(subscription=ctx.streams.open(start_at), vaults=clocks)


@handles(subscriptions.UNSUBSCRIBE)
async def unsubscribe(ctx: CallContext, params: UnsubscribeParams) -> UnsubscribeResult:
    """Stop one stream; the connection and its other subscriptions stay.

    Raises:
        Unavailable: UNAVAILABLE, the connection cannot carry notifications.
    """
    if ctx.streams is None:
        raise Unavailable("this connection cannot carry notifications")
    await ctx.streams.close(params.subscription)
    return UnsubscribeResult(subscription=params.subscription)
