"""A vault's rebuild requests: one rebuild at a time; requests made while the next waits to start
join it; a failure reaches every request it answers; a caller that goes away leaves it running."""

from __future__ import annotations

import anyio
import pytest

from vaultd.errors import Unavailable
from vaultd.vault.rebuild import RebuildQueue, Rebuilt


class Rebuilds:
    """Rebuilds held until released, one release each; counts what ran and whom each answered."""

    def __init__(self) -> None:
        self.started: list[int] = []  #: per rebuild run, the requests beyond the first it answers
        self.release = anyio.Event()
        self.fail = False
        self._began = anyio.Event()

    async def run(self, joined: int) -> Rebuilt:
        self.started.append(joined)
        self._began.set()
        self._began = anyio.Event()
        await self.release.wait()
        self.release = anyio.Event()
        if self.fail:
            raise Unavailable("the vault went away")
        return Rebuilt(notes=len(self.started), parsed=0, changed=0, seconds=0.0)

    async def until(self, count: int) -> None:
        """Until ``count`` rebuilds have started (bounded)."""
        with anyio.fail_after(10):
            while len(self.started) < count:
                await self._began.wait()


def test_requests_behind_a_running_rebuild_join_the_next_one_only() -> None:
    async def main() -> None:
        work = Rebuilds()
        queue = RebuildQueue(work.run)
        results: list[Rebuilt] = []

        async def ask() -> None:
            results.append(await queue.request(None, None))

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask)
            await work.until(1)  # the first runs (held)
            for _ in range(239):
                tg.start_soon(ask)
            await anyio.wait_all_tasks_blocked()
            assert len(work.started) == 1, "the others wait: none starts beside a running rebuild"
            work.release.set()
            await work.until(2)  # the one they all joined
            work.release.set()
        assert work.started == [0, 238], "one more rebuild answered the 239 requests made while it waited"
        assert [r.notes for r in results].count(1) == 1 and [r.notes for r in results].count(2) == 239

    anyio.run(main)


def test_a_failure_reaches_every_request_and_the_next_request_starts_afresh() -> None:
    async def main() -> None:
        work = Rebuilds()
        queue = RebuildQueue(work.run)
        errors: list[Exception] = []

        async def ask() -> None:
            try:
                await queue.request(None, None)
            except Unavailable as exc:
                errors.append(exc)

        work.fail = True
        async with anyio.create_task_group() as tg:
            tg.start_soon(ask)
            await work.until(1)
            tg.start_soon(ask)
            tg.start_soon(ask)
            await anyio.wait_all_tasks_blocked()
            work.release.set()
            await work.until(2)
            work.release.set()
        assert len(errors) == 3 and work.started == [0, 1]
        work.fail = False
        async with anyio.create_task_group() as tg:
            tg.start_soon(ask)
            await work.until(3)
            work.release.set()
        assert len(errors) == 3

    anyio.run(main)


def test_a_caller_that_goes_away_leaves_the_rebuild_to_those_who_joined() -> None:
    async def main() -> None:
        work = Rebuilds()
        queue = RebuildQueue(work.run)
        got: list[Rebuilt] = []
        async with anyio.create_task_group() as owner:  # the vault's own task group
            async with anyio.create_task_group() as callers:
                first = anyio.CancelScope()

                async def leaving() -> None:
                    with first:
                        await queue.request(owner, None)

                async def staying() -> None:
                    got.append(await queue.request(owner, None))

                callers.start_soon(leaving)
                await work.until(1)
                callers.start_soon(staying)  # joins nothing running: queues the next one
                await anyio.wait_all_tasks_blocked()
                first.cancel()  # the first caller's connection is gone
                work.release.set()
                await work.until(2)
                work.release.set()
        assert len(got) == 1 and got[0].notes == 2

    anyio.run(main)


def test_the_turn_is_taken_before_a_rebuild_starts() -> None:
    async def main() -> None:
        work = Rebuilds()
        queue = RebuildQueue(work.run)
        turn = anyio.Lock()

        async with anyio.create_task_group() as tg:
            await turn.acquire()  # another client's vault-wide work holds the turn
            tg.start_soon(queue.request, None, lambda: turn)
            await anyio.wait_all_tasks_blocked()
            assert work.started == [], "no rebuild before the turn"
            turn.release()
            await work.until(1)
            work.release.set()

    anyio.run(main)


@pytest.mark.parametrize("n", [1, 2])
def test_a_request_after_the_last_rebuild_ended_runs_a_new_one(n: int) -> None:
    async def main() -> None:
        work = Rebuilds()
        queue = RebuildQueue(work.run)
        for k in range(n):
            async with anyio.create_task_group() as tg:
                tg.start_soon(queue.request, None, None)
                await work.until(k + 1)
                work.release.set()
        assert work.started == [0] * n

    anyio.run(main)
