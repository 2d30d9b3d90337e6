"""note.retrieve through vaultctl: passages with line ranges, kept fresh by the watcher, bounded,
and BM25's order whole when the rerank model is absent or fails."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from protocol.errors import ErrorCode
from protocol.limits import MAX_RETRIEVE_QUERY_CHARS
from protocol.methods.retrieve import RETRIEVE, RetrieveParams
from tests.support.harness import Daemon, Home, vaultctl
from tests.support.typed import TypedClient, refused

if TYPE_CHECKING:
    from pathlib import Path

NOTES = {
    "Journal.md": "# Journal\n\n## Recovery\n\nAfter a crash the journal rolls back the newest uncommitted operation.\n",
    "Index.md": "# Index\n\n## Cache\n\nThe index cache is reconciled by stat at restart.\n\n## Search\n\nSearch ranks notes by BM25.\n",
    "Other.md": "# Other\n\nNothing about crashes here, only gardening and tomatoes.\n",
}


def _vault(home: Home, cli: Any) -> Path:
    root = home.root / "vault"
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    assert cli("vault", "add", "v", str(root)).code == 0
    return root


@pytest.fixture
def vault(daemon: Daemon, home: Home, cli: Any) -> Path:
    return _vault(home, cli)


def retrieve(cli: Any, *args: str) -> dict[str, Any]:
    result = cli("retrieve", *args, "--json")
    assert result.code == 0, result.err
    return json.loads(result.out)  # type: ignore[no-any-return]


def test_passages_name_their_note_heading_and_lines(vault: Path, cli: Any) -> None:
    found = retrieve(cli, "what happens after a crash", "--no-rerank")
    top = found["passages"][0]
    assert (top["path"], top["heading"], top["line_start"], top["line_end"]) == ("Journal.md", ["Journal", "Recovery"], 3, 5)
    assert top["citation"] == "Journal.md#Recovery" and found["ranking"] == "bm25" and found["rerank"] == "off"
    text = cli("retrieve", "what happens after a crash").out
    assert "Journal.md#Recovery  (lines 3-5)" in text


def test_the_chunk_index_follows_edits(vault: Path, cli: Any) -> None:
    assert retrieve(cli, "zeppelin")["passages"] == []
    (vault / "Index.md").write_text(NOTES["Index.md"] + "\n## Zeppelins\n\nA zeppelin section added in an editor.\n")
    found = retrieve(cli, "zeppelin", "--fresh")
    assert [(p["path"], p["line_start"]) for p in found["passages"]] == [("Index.md", 11)]
    (vault / "Index.md").unlink()
    assert retrieve(cli, "zeppelin", "--fresh")["passages"] == []
    created = cli("new", "airships", "--body", "-", input="# Airships\n\nZeppelin history.\n")
    assert created.code == 0, created.err
    assert [p["path"] for p in retrieve(cli, "zeppelin")["passages"]] == ["airships.md"], "a write is retrievable once it returns"


def test_bounds_are_enforced_at_their_edges(vault: Path, cli: Any, typed: TypedClient) -> None:
    at_bound = "crash " * (MAX_RETRIEVE_QUERY_CHARS // 6) + "x" * (MAX_RETRIEVE_QUERY_CHARS % 6)
    assert len(at_bound) == MAX_RETRIEVE_QUERY_CHARS
    typed.call(RETRIEVE, RetrieveParams(query=at_bound))
    with refused(ErrorCode.INVALID_PARAMS):
        typed.call(RETRIEVE, RetrieveParams(query=at_bound + "y"))
    for limit in (0, 1001):
        with refused(ErrorCode.INVALID_PARAMS):
            typed.call(RETRIEVE, RetrieveParams(query="crash", limit=limit))
    assert len(typed.call(RETRIEVE, RetrieveParams(query="crash index search notes", limit=1000, rerank=False)).passages) <= 1000
    with refused(ErrorCode.INVALID_PARAMS):
        typed.call(RETRIEVE, RetrieveParams(query=" \t\n"))
    per_note = typed.call(RETRIEVE, RetrieveParams(query="index cache search bm25 stat", per_note=1, rerank=False)).passages
    assert len({p.path for p in per_note}) == len(per_note)


def test_a_failing_model_falls_back_to_bm25_whole(home: Home, cli: Any, tmp_path: Path) -> None:
    empty = tmp_path / "no-weights"
    empty.mkdir()
    home.env["VAULTD_RERANK_WEIGHTS"] = str(empty)
    daemon = Daemon(home)
    try:
        _vault(home, cli)
        bm25 = retrieve(cli, "crash index cache", "--no-rerank")
        failed = retrieve(cli, "crash index cache")
        assert failed["rerank"] == "failed" and failed["ranking"] == "bm25" and "did not load" in failed["note"]
        assert failed["passages"] == bm25["passages"], "BM25's order and scores, whole"
    finally:
        daemon.stop()


def test_the_installed_model_reranks(vault: Path, cli: Any) -> None:
    used = retrieve(cli, "what happens after a crash")
    assert used["rerank"] == "used" and used["ranking"] == "reranked"
    assert {p["path"] for p in used["passages"]} <= {"Journal.md", "Index.md", "Other.md"}


def test_the_chunk_index_is_beside_the_cache_and_private(vault: Path, home: Home, cli: Any) -> None:
    retrieve(cli, "crash")
    chunk_files = list((home.home / "indexes").glob("*-chunks-v2.sqlite"))
    assert len(chunk_files) == 1 and (chunk_files[0].stat().st_mode & 0o777) == 0o600
    result = vaultctl(home, "retrieve", "crash", "--json")
    assert result.code == 0


JAPANESE = {
    "ja/df.md": "# df\n\n## 名前\n\ndf - ファイルシステムの使用状況を表示する。ディスク容量、空き、使用率を一覧にする。\n",
    "ja/日記.md": "# 日記\n\n## 今日\n\nしらべたいことをしらべたい。しらべたいだけしらべたい。\n",
    "ja/メモ.md": "# メモ\n\n## 明日\n\nあしたもしらべたい。しらべたらねたい。\n",
    "ja/予定.md": "# 予定\n\n## 週末\n\nしらべもの。たべたい。\n",
    **{f"notes/n{i}.md": f"# Note {i}\n\nPlain words about gardening, number {i}.\n" for i in range(12)},
}


def test_a_japanese_question_finds_its_note_by_its_telling_words(daemon: Daemon, home: Home, cli: Any) -> None:
    """A Japanese question is mostly endings in hiragana (しらべたい: "want to look up"): asked as
    alternatives, their bigrams put the notes full of the same endings first. BM25 through the
    daemon (no rerank, no meaning model) ranks the note holding the question's word first, in
    note.retrieve and in note.search's continuation."""
    root = home.root / "vault"
    for rel, text in JAPANESE.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    assert cli("vault", "add", "v", str(root)).code == 0
    found = retrieve(cli, "容量をしらべたい", "--no-rerank")
    assert found["ranking"] == "bm25"
    assert [p["path"] for p in found["passages"]][:1] == ["ja/df.md"]
    # note.search, as an agent asks it: no note holds every word, so the answer continues by
    # any word (the meaning model is off here), and the note holding the question's word leads.
    asked = cli("search", "容量をしらべたい", "--meaning", "--json")
    assert asked.code == 0, asked.err
    assert [(h["path"], h["match"]) for h in json.loads(asked.out)["hits"]][:1] == [("ja/df.md", "meaning")]
    # A question in hiragana alone still asks its bigrams, and finds the notes that hold them.
    only_kana = retrieve(cli, "しらべたい", "--no-rerank")
    assert {p["path"] for p in only_kana["passages"]} >= {"ja/日記.md", "ja/メモ.md"}
