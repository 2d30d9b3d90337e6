"""The reply budget's rules, one at a time: who waits, who goes first, what is refused."""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio

from vaultd.server.budget import RESERVE_BYTES, SMALL_REPLY_BYTES, ReplyBudget, Reservation, Share

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

KiB = 1024


def run(main: Callable[[], Awaitable[None]]) -> None:
    anyio.run(main)


def test_a_connection_holding_nothing_always_fits_its_own_share() -> None:
    budget = ReplyBudget(total=1024 * KiB, per_connection=64 * KiB)

    async def main() -> None:
        share = budget.share()
        taken = await budget.reserve(share)
        assert taken.size == 64 * KiB == share.held  # the estimate is never more than the share
        assert budget.settle(share, taken, 64 * KiB) is None
        assert share.held == budget.held == 64 * KiB

    run(main)


def test_a_reply_over_the_share_is_refused_with_the_numbers_and_the_setting() -> None:
    budget = ReplyBudget(total=1024 * KiB, per_connection=256 * KiB)

    async def main() -> None:
        share = budget.share()
        taken = await budget.reserve(share)
        note = budget.settle(share, taken, 256 * KiB + 1)
        assert note is not None and f"{256 * KiB + 1} bytes, over the {256 * KiB}-byte limit" in note
        assert "connection_reply_bytes" in note
        assert share.held == budget.held == 0 and budget.refused == 1

    run(main)


async def _waiting(budget: ReplyBudget, share: Share, got: list[str], name: str, caught_up: bool = False) -> None:
    await budget.reserve(share, caught_up=caught_up)
    got.append(name)


def test_waiters_holding_nothing_are_served_before_those_holding_something() -> None:
    budget = ReplyBudget(total=4 * RESERVE_BYTES, per_connection=4 * RESERVE_BYTES)

    async def main() -> None:
        a, busy, c, idle = budget.share(), budget.share(), budget.share(), budget.share()
        first = await budget.reserve(a)
        await budget.reserve(a)  # holding something, a fills half the total and no more
        await budget.reserve(busy)
        third = await budget.reserve(c)  # the total is now full
        got: list[str] = []
        async with anyio.create_task_group() as tg:
            tg.start_soon(_waiting, budget, busy, got, "busy")
            await anyio.sleep(0.01)
            tg.start_soon(_waiting, budget, idle, got, "idle")
            await anyio.sleep(0.01)
            assert got == []
            budget.release(a, first.size)
            await anyio.sleep(0.01)
            assert got == ["idle"], "the connection holding nothing came later but goes first"
            for share, size in ((a, first.size), (c, third.size), (idle, RESERVE_BYTES)):
                budget.release(share, size)
        assert got == ["idle", "busy"]

    run(main)


def test_a_connection_holding_something_fills_only_half_the_total() -> None:
    budget = ReplyBudget(total=4 * RESERVE_BYTES, per_connection=4 * RESERVE_BYTES)

    async def main() -> None:
        greedy, newcomer = budget.share(), budget.share()
        await budget.reserve(greedy)
        await budget.reserve(greedy)
        with anyio.move_on_after(0.05) as timer:
            await budget.reserve(greedy)
        assert timer.cancelled_caught, "one connection took more than half the total"
        await budget.reserve(newcomer)  # the other half is there for connections holding nothing
        await budget.reserve(budget.share())
        assert budget.held == budget.total

    run(main)


def test_a_waiter_waiting_for_its_own_share_does_not_hold_back_others() -> None:
    budget = ReplyBudget(total=4 * RESERVE_BYTES, per_connection=RESERVE_BYTES)

    async def main() -> None:
        stuck, other = budget.share(), budget.share()
        await budget.reserve(stuck)
        got: list[str] = []
        async with anyio.create_task_group() as tg:
            tg.start_soon(_waiting, budget, stuck, got, "stuck")  # its share is full: waits
            await anyio.sleep(0.01)
            await budget.reserve(other)  # the total has room: not queued behind it
            assert got == []
            tg.cancel_scope.cancel()
        assert budget.held == 2 * RESERVE_BYTES

    run(main)


def test_a_cancelled_waiter_takes_nothing_and_is_not_granted_later() -> None:
    budget = ReplyBudget(total=RESERVE_BYTES, per_connection=RESERVE_BYTES)

    async def main() -> None:
        full, gone = budget.share(), budget.share()
        taken = await budget.reserve(full)
        with anyio.move_on_after(0.05) as timer:
            await budget.reserve(gone)
        assert timer.cancelled_caught
        budget.release(full, taken.size)
        assert budget.held == gone.held == 0 and budget.waiting == 0

    run(main)


def test_only_a_caught_up_connection_goes_over_the_total_and_only_with_a_small_reply() -> None:
    budget = ReplyBudget(total=2 * RESERVE_BYTES, per_connection=RESERVE_BYTES)

    async def main() -> None:
        holder, reader = budget.share(), budget.share()
        await budget.reserve(holder)
        await budget.reserve(budget.share())  # the total is full
        with anyio.move_on_after(0.05) as timer:
            await budget.reserve(reader)  # not caught up: it waits like anyone
        assert timer.cancelled_caught
        big = await budget.reserve(reader, caught_up=True)
        assert budget.held == 3 * RESERVE_BYTES
        note = budget.settle(reader, big, SMALL_REPLY_BYTES + 1)
        assert note is not None and "queued replies are full" in note
        small = await budget.reserve(reader, caught_up=True)
        assert budget.settle(reader, small, SMALL_REPLY_BYTES) is None
        assert budget.held == 2 * RESERVE_BYTES + SMALL_REPLY_BYTES <= budget.total + budget.per_connection

    run(main)


def test_a_big_reply_beside_others_is_refused_while_connections_holding_nothing_wait() -> None:
    budget = ReplyBudget(total=4 * RESERVE_BYTES, per_connection=2 * RESERVE_BYTES)

    async def main() -> None:
        busy, idle = budget.share(), budget.share()
        one = await budget.reserve(busy)
        two = await budget.reserve(busy)
        three = await budget.reserve(budget.share())
        await budget.reserve(budget.share())  # the total is now full
        async with anyio.create_task_group() as tg:
            tg.start_soon(budget.reserve, idle)
            await anyio.sleep(0.01)
            big = SMALL_REPLY_BYTES + 1
            note = budget.settle(busy, one, big)
            assert note is not None, "a big reply beside another was kept while a connection holding nothing waited"
            assert budget.settle(busy, two, big) is None  # beside nothing else now: kept
        assert idle.held == RESERVE_BYTES and busy.held == SMALL_REPLY_BYTES + 1
        assert three.size == RESERVE_BYTES

    run(main)


def test_a_small_reply_beside_others_is_kept_while_connections_holding_nothing_wait() -> None:
    """A write's receipt must not be refused after the write was applied just because others wait."""
    budget = ReplyBudget(total=4 * RESERVE_BYTES, per_connection=2 * RESERVE_BYTES)

    async def main() -> None:
        busy, idle = budget.share(), budget.share()
        one = await budget.reserve(busy)
        await budget.reserve(busy)
        await budget.reserve(budget.share())
        await budget.reserve(budget.share())
        async with anyio.create_task_group() as tg:
            tg.start_soon(budget.reserve, idle)
            await anyio.sleep(0.01)
            assert budget.settle(busy, one, SMALL_REPLY_BYTES) is None
            tg.cancel_scope.cancel()

    run(main)


def test_settling_smaller_than_reserved_gives_the_rest_back() -> None:
    budget = ReplyBudget(total=RESERVE_BYTES, per_connection=RESERVE_BYTES)

    async def main() -> None:
        share = budget.share()
        taken = await budget.reserve(share)
        assert budget.settle(share, taken, 100) is None
        assert budget.held == 100
        budget.release(share, 100)
        assert budget.held == 0 and budget.peak == RESERVE_BYTES
        assert share.estimate == RESERVE_BYTES  # a small reply does not shrink the next estimate below it
        assert budget.unreserved() == Reservation(0, budget.total + budget.per_connection)

    run(main)
