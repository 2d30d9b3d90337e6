"""A subscription's sender with the real event log, filter and reply budget, writing to a peer the
test controls: how fast it reads, and how much it has left unread. The rules at their edges: a
subscriber that falls behind what the log keeps is dropped as lagged, one that reads nothing is
dropped and its connection closed, an unsubscribe waits for the frame being written, a settle
time holds events until the vault is quiet."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
import pytest

from protocol.methods.common import Channel
from protocol.methods.events import NoteCreated
from protocol.methods.vaults import VaultEntry
from vaultd.api.event_filter import EventFilter
from vaultd.api.streams import SubscriptionStart
from vaultd.events.log import EventLog
from vaultd.events.wake import Waker, Wakers
from vaultd.registry.config import DaemonLimits
from vaultd.server.budget import ReplyBudget
from vaultd.server.subscriptions import ConnectionStreams, after_reply

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Coroutine

    from vaultd.server.budget import Share

MiB = 1024 * 1024


@dataclass
class Runtime:
    events: EventLog
    entry: VaultEntry


@dataclass
class Host:
    vaults: dict[str, Runtime]
    limits: DaemonLimits = field(default_factory=lambda: DaemonLimits(send_timeout_s=0.3))
    budget: ReplyBudget = field(default_factory=lambda: ReplyBudget(64 * MiB, 16 * MiB))
    vault_set: Wakers = field(default_factory=Wakers)


class Peer:
    """The session side a subscription writes to: frames land in ``frames`` once ``gate`` is open."""

    def __init__(self, host: Host, tasks: anyio.abc.TaskGroup) -> None:
        self.host = host
        self._share = host.budget.share()
        self._tasks = tasks
        self.frames: list[dict[str, Any]] = []
        self.gate = anyio.Event()
        self.gate.set()
        self.unread: int | None = None  #: what the kernel would say is unread (None: cannot be asked)
        self.dropped = False
        self.changed = Waker()  #: woken by every write and by the drop

    @property
    def share(self) -> Share:
        return self._share

    def peer_caught_up(self) -> bool:
        return self.unread == 0

    def unread_bytes(self) -> int | None:
        return self.unread

    def hold_back_bytes(self) -> int | None:
        return 1000 if self.unread is not None else None

    async def write(self, data: bytes) -> None:
        await self.gate.wait()
        self.frames.append(json.loads(data))
        self.changed.wake()

    def drop(self) -> None:
        self.dropped = True
        self.changed.wake()

    def start(self, fn: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> None:
        self._tasks.start_soon(fn, *args)

    def events(self) -> list[dict[str, Any]]:
        return [e for f in self.frames if f["method"] == "subscription.events" for e in f["params"]["events"]]


@dataclass
class World:
    log: EventLog
    peer: Peer
    streams: ConnectionStreams

    def subscribe(self, settle_s: float = 0.0, start: int = 0) -> int:
        begin = SubscriptionStart(
            vaults=frozenset({"v"}), filter=EventFilter(None, [], Channel.CLI), settle_s=settle_s, starts={"v": (self.log, start)}
        )
        with after_reply() as hooks:
            sub = self.streams.open(begin)
        for hook in hooks:
            hook(True)  # the subscribe reply went out
        return sub

    def record(self, n: int, start: int = 0) -> None:
        self.log.record(*(NoteCreated(path=f"{i}.md") for i in range(start, start + n)))


@pytest.fixture
async def world() -> AsyncIterator[World]:
    log = EventLog("v", retained=50)
    host = Host(vaults={"v": Runtime(log, VaultEntry(id="v", path="/v"))})
    async with anyio.create_task_group() as tg:
        peer = Peer(host, tg)
        yield World(log, peer, ConnectionStreams(peer))
        tg.cancel_scope.cancel()


async def until(peer: Peer, predicate: Callable[[], object]) -> None:
    """Wait (at most 5 s) until the peer has seen what ``predicate`` asks for."""
    with anyio.fail_after(5):
        while not predicate():
            await peer.changed.wait()


async def test_nothing_is_sent_before_the_reply_and_everything_after_once(world: World) -> None:
    begin = SubscriptionStart(vaults=None, filter=EventFilter(None, [], Channel.CLI), settle_s=0.0, starts={"v": (world.log, 0)})
    with after_reply() as hooks:
        world.streams.open(begin)
        world.record(3)
        await anyio.sleep(0.05)
        assert world.peer.frames == [], "held until the reply is out"
    hooks[0](True)
    await until(world.peer, lambda: len(world.peer.events()) == 3)
    world.record(2, start=3)
    await until(world.peer, lambda: len(world.peer.events()) == 5)
    assert [e["path"] for e in world.peer.events()] == [f"{i}.md" for i in range(5)]


async def test_a_subscribe_whose_reply_failed_sends_nothing(world: World) -> None:
    begin = SubscriptionStart(vaults=None, filter=EventFilter(None, [], Channel.CLI), settle_s=0.0, starts={"v": (world.log, 0)})
    with after_reply() as hooks:
        world.streams.open(begin)
    hooks[0](False)
    world.record(3)
    await anyio.sleep(0.1)
    assert world.peer.frames == [] and world.streams.count == 0


async def test_falling_behind_what_the_log_keeps_is_lagged(world: World) -> None:
    world.peer.gate = anyio.Event()  # the peer stops reading
    world.subscribe()
    world.record(10)
    await anyio.sleep(0.05)  # the sender is writing the first frame, and waits
    world.record(100, start=10)  # the log keeps 50: events 11..60 are gone
    world.peer.gate.set()
    await until(world.peer, lambda: any(f["method"] == "subscription.dropped" for f in world.peer.frames))
    first, dropped = world.peer.frames
    assert len(first["params"]["events"]) == 10
    assert dropped["params"]["reason"] == "lagged" and dropped["params"]["clocks"] == {"v": world.log.token(10)}
    assert not world.peer.dropped, "a lagging subscription ends; its connection stays"
    assert world.streams.count == 0 and world.log.followers == 0


async def test_a_peer_that_reads_nothing_is_dropped_after_the_send_timeout(world: World) -> None:
    world.subscribe()
    world.record(1)
    await until(world.peer, lambda: len(world.peer.events()) == 1)
    world.peer.unread = 5000  # over the hold-back mark, and it never goes down
    world.record(5, start=1)
    await anyio.sleep(0.15)
    assert len(world.peer.frames) == 1, "held back, not sent"
    await until(world.peer, lambda: world.peer.dropped)
    final = world.peer.frames[-1]["params"]
    assert final["reason"] == "not_reading" and final["clocks"] == {"v": world.log.token(1)}


async def test_a_peer_that_reads_slowly_is_waited_for(world: World) -> None:
    world.subscribe()
    world.peer.unread = 5000
    world.record(2)

    async def reading() -> None:
        for left in (4000, 3000, 2000, 900):  # each step within the send timeout
            await anyio.sleep(0.2)
            world.peer.unread = left

    async with anyio.create_task_group() as tg:
        tg.start_soon(reading)
    await until(world.peer, lambda: len(world.peer.events()) == 2)
    assert not world.peer.dropped


async def test_unsubscribe_waits_for_the_frame_being_written_and_nothing_follows(world: World) -> None:
    world.peer.gate = anyio.Event()
    sub = world.subscribe()
    world.record(3)
    await anyio.sleep(0.05)

    async def release() -> None:
        await anyio.sleep(0.1)
        world.peer.gate.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(release)
        await world.streams.close(sub)  # returns only once the frame is out
    assert len(world.peer.events()) == 3
    world.record(3, start=3)
    await anyio.sleep(0.1)
    assert len(world.peer.events()) == 3 and world.log.followers == 0


async def test_settle_holds_events_until_the_vault_is_quiet(world: World) -> None:
    world.subscribe(settle_s=0.2)
    for i in range(4):
        world.record(1, start=i)
        await anyio.sleep(0.05)
        assert world.peer.frames == [], "still busy: held"
    await until(world.peer, lambda: world.peer.frames)
    assert len(world.peer.frames) == 1 and len(world.peer.events()) == 4
