"""The pure parts of ranking by meaning: what counts as plain words, the passage key and the text
embedded, the int8 vector cache, and answers cut to a byte budget."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from vaultd.api.answer_bytes import fitted
from vaultd.retrieve import hybrid, meaning
from vaultd.retrieve.backend import Choice
from vaultd.retrieve.chunks import EMBED_CHARS, MAX_TITLE_CHARS, Chunk, embed_text, passage_key
from vaultd.retrieve.hybrid import RRF_K, Ranked, by_note_size, fused, is_plain
from vaultd.retrieve.store import ChunkStore, DocStat, StoredChunk
from vaultd.retrieve.vectors import VectorStore

if TYPE_CHECKING:
    from pathlib import Path

WORD = st.text(alphabet=st.characters(categories=("L", "N")), min_size=1, max_size=12).filter(lambda w: w not in ("OR", "AND", "NOT"))


@given(st.lists(WORD, min_size=1, max_size=8))
def test_words_and_spaces_are_plain(words: list[str]) -> None:
    assert is_plain(" ".join(words))


@given(st.lists(WORD, min_size=1, max_size=4), st.sampled_from(['"a b"', "(a)", "-a", "a OR b", "NOT a", "tag:#x", "path:notes/"]))
def test_any_operator_makes_a_query_exact(words: list[str], operator: str) -> None:
    assert not is_plain(" ".join([*words, operator]))


def test_an_empty_query_is_not_plain_and_inner_hyphens_are_words() -> None:
    assert not is_plain("  ")
    assert is_plain("how do I set up a pre-commit hook")
    assert is_plain("ログアウトしても処理を続けさせたい")


@given(st.text(max_size=3000), st.lists(st.text(max_size=400), max_size=8), st.text(max_size=5000))
def test_the_embedded_text_is_bounded_and_its_key_is_its_digest(title: str, heading: list[str], text: str) -> None:
    embedded = embed_text(title, heading, text)
    assert len(embedded) <= 2 * MAX_TITLE_CHARS + EMBED_CHARS + 3
    assert passage_key(embedded) == passage_key(embed_text(title, heading, text)) and len(passage_key(embedded)) == 16


def test_identical_passages_share_a_key_and_a_changed_one_does_not() -> None:
    a = passage_key(embed_text("Note", ["H"], "the same paragraph"))
    assert a == passage_key(embed_text("Note", ["H"], "the same paragraph"))
    assert a != passage_key(embed_text("Note", ["H"], "the same paragraph, changed"))
    # Past the embedded head, text does not change what is embedded (nor the key).
    head = "x" * EMBED_CHARS
    assert passage_key(embed_text("N", [], head + "tail one")) == passage_key(embed_text("N", [], head + "tail two"))


def _unit(rows: int, dims: int, seed: int) -> np.ndarray:
    m = np.random.default_rng(seed).standard_normal((rows, dims)).astype(np.float32)
    unit: np.ndarray = m / np.linalg.norm(m, axis=1, keepdims=True)
    return unit


def test_vectors_round_trip_through_the_file_and_rank_by_cosine(tmp_path: Path) -> None:
    vectors = _unit(50, 384, 1)
    keys = [bytes([i]) * 16 for i in range(50)]
    store = VectorStore(tmp_path / "v.sqlite")
    store.add(keys, vectors)
    store.add(keys[:5], vectors[:5])  # a key already there is never stored twice
    assert len(store) == 50
    for i in (0, 17, 49):
        found, cosines = store.nearest(vectors[i], 3)
        assert found[0] == keys[i] and abs(cosines[0] - 1.0) < 0.02 and cosines == sorted(cosines, reverse=True)
    store.close()
    again = VectorStore(tmp_path / "v.sqlite")
    assert len(again) == 50 and again.nearest(vectors[17], 1)[0] == [keys[17]]
    assert again.keep_only(keys[:10]) == 40 and len(again) == 10
    assert again.nearest(vectors[17], 5)[0][0] in keys[:10]
    again.close()
    assert len(VectorStore(tmp_path / "v.sqlite")) == 10


def test_a_damaged_vector_file_is_started_again(tmp_path: Path) -> None:
    (tmp_path / "v.sqlite").write_bytes(b"not a database at all" * 100)
    store = VectorStore(tmp_path / "v.sqlite")
    assert len(store) == 0
    store.add([b"k" * 16], _unit(1, 8, 2))
    assert store.nearest(_unit(1, 8, 2)[0], 1)[0] == [b"k" * 16]
    store.close()


@given(st.lists(st.text(max_size=300), max_size=40), st.integers(min_value=1, max_value=4000))
def test_an_answer_fits_its_bound_and_keeps_its_order(items: list[str], max_bytes: int) -> None:
    kept = fitted(items, max_bytes)
    assert kept == items[: len(kept)]
    if items:
        assert kept  # the first always comes
    if len(kept) > 1:
        assert sum(len(msgspec.json.encode(i)) + 1 for i in kept) <= max_bytes
    if len(kept) < len(items):
        assert sum(len(msgspec.json.encode(i)) + 1 for i in items[: len(kept) + 1]) > max_bytes


def _chunk(ident: int, path: str) -> StoredChunk:
    return StoredChunk(ident, path, (), ident, ident, path, f"passage {ident}", 0.0)


def test_a_note_found_by_words_and_by_meaning_in_different_passages_is_not_split() -> None:
    """One passage a note (the search continuation): note C's best passage by words (C1) is not
    its best by meaning (C2). Fused passage by passage, C1 and C2 each had half a note's share
    and B, found by both in one passage, came first; fused by note, C has both shares."""
    b1, c1, c2, a1 = _chunk(1, "B.md"), _chunk(2, "C.md"), _chunk(3, "C.md"), _chunk(4, "A.md")
    lexical = [Ranked(b1, 9.0), Ranked(c1, 8.0), Ranked(a1, 7.0)]
    semantic = [Ranked(c2, 0.9, cosine=0.9), Ranked(a1, 0.8, cosine=0.8), Ranked(b1, 0.7, cosine=0.7)]
    out = fused(lexical, semantic, per_note=1, limit=10)
    assert [r.chunk.path for r in out] == ["C.md", "B.md", "A.md"]
    top = out[0]
    assert top.chunk is c2 and top.meaning_rank == 1 and top.bm25_rank is None
    assert top.fused == top.score and abs(top.score - (1 / (RRF_K + 2) + 1 / (RRF_K + 1))) < 1e-12


def test_a_note_best_passage_carries_its_score_and_the_others_follow() -> None:
    a1, a2, b1 = _chunk(1, "A.md"), _chunk(2, "A.md"), _chunk(3, "B.md")
    out = fused([Ranked(a1, 3.0), Ranked(b1, 2.0), Ranked(a2, 1.0)], [Ranked(a2, 0.9, cosine=0.9)], per_note=3, limit=10)
    assert [r.chunk.id for r in out] == [2, 1, 3]  # a2: both rankings; a1: words alone, still A's
    assert out[0].bm25_rank == 3 and out[0].meaning_rank == 1 and out[1].bm25_rank == 1


@given(
    st.lists(st.integers(min_value=0, max_value=30), max_size=25, unique=True),
    st.lists(st.integers(min_value=0, max_value=30), max_size=25, unique=True),
    st.integers(min_value=1, max_value=4),
    st.integers(min_value=1, max_value=40),
)
def test_fusion_orders_notes_by_their_reciprocal_ranks(lex: list[int], sem: list[int], per_note: int, limit: int) -> None:
    chunks = {i: _chunk(i, f"n{i % 7}.md") for i in {*lex, *sem}}
    out = fused([Ranked(chunks[i], -n) for n, i in enumerate(lex)], [Ranked(chunks[i], -n) for n, i in enumerate(sem)], per_note, limit)
    assert len(out) <= limit and len({r.chunk.id for r in out}) == len(out)
    paths = [r.chunk.path for r in out]
    assert all(paths.count(p) <= per_note for p in paths)
    assert [r.score for r in out] == sorted((r.score for r in out), reverse=True)

    def note_ranks(ids: list[int]) -> dict[str, int]:
        ranks: dict[str, int] = {}
        for i in ids:
            ranks.setdefault(chunks[i].path, len(ranks) + 1)
        return ranks

    by_words, by_meaning = note_ranks(lex), note_ranks(sem)
    score = {p: sum(1 / (RRF_K + r[p]) for r in (by_words, by_meaning) if p in r) for p in {*by_words, *by_meaning}}
    first = list(dict.fromkeys(paths))
    assert [round(score[p], 12) for p in first] == sorted((round(score[p], 12) for p in first), reverse=True)
    for r in out:  # a note's passages never score above the note
        assert r.score <= score[r.chunk.path] + 1e-12


def test_a_note_of_many_passages_does_not_win_by_having_more_chances() -> None:
    """By cosine alone the long note's best passage is first; corrected for its note's 200
    passages it falls behind the one-passage note's, and the cosines stay the passages' own."""
    long_best, short = _chunk(1, "Manual.md"), _chunk(2, "Answer.md")
    semantic = [Ranked(long_best, 0.81, cosine=0.81), Ranked(short, 0.79, cosine=0.79)]
    out = by_note_size(semantic, {"Manual.md": 200, "Answer.md": 1})
    assert [r.chunk.path for r in out] == ["Answer.md", "Manual.md"]
    assert [r.cosine for r in out] == [0.79, 0.81]
    # Of equal size (or unknown size), the order is the cosines' own.
    assert [r.chunk.path for r in by_note_size(semantic, {"Manual.md": 3, "Answer.md": 3})] == ["Manual.md", "Answer.md"]
    assert [r.chunk.path for r in by_note_size(semantic, {})] == ["Manual.md", "Answer.md"]


@given(st.lists(st.tuples(st.integers(min_value=0, max_value=6), st.integers(min_value=-1000, max_value=1000)), max_size=30))
def test_the_size_correction_keeps_every_passage_and_a_note_order_within_it(items: list[tuple[int, int]]) -> None:
    chunks = [(_chunk(i, f"n{note}.md"), cos / 1000) for i, (note, cos) in enumerate(items)]
    sizes = {f"n{n}.md": 1 + 40 * n for n in range(7)}
    out = by_note_size([Ranked(c, cos, cosine=cos) for c, cos in chunks], sizes)
    assert sorted(r.chunk.id for r in out) == list(range(len(items)))
    for path in sizes:  # within one note, the cosines decide
        own = [r.cosine or 0.0 for r in out if r.chunk.path == path]
        assert own == sorted(own, reverse=True)


class _Covered:
    """What hybrid.rank reads of a vault's Meaning: its vectors and its backend (the filler,
    which only fills the vectors, is not needed when they are written here)."""

    def __init__(self, vectors: VectorStore, choice: Choice) -> None:
        self.vectors, self.choice = vectors, choice


def test_a_note_fair_in_both_rankings_beats_one_first_in_a_single_ranking(tmp_path: Path) -> None:
    """One passage asked for, one a note (a search continuation of limit 1): Both.md is second by
    words and second by meaning; Words.md is first by words alone, Meaning.md first by meaning
    alone. Fused one deep, Both.md was never seen; read FUSION_DEPTH deep, it has two shares."""
    store = ChunkStore(tmp_path / "v-chunks-v2.sqlite")
    texts = {
        "Words.md": "zebra quagga zebra quagga okapi",
        "Both.md": "a zebra among many other animals of the plains and their long migrations",
        "Meaning.md": "striped horses of the savanna",
        **{f"Filler{i}.md": f"gardening notes number {i}" for i in range(5)},
    }
    store.apply([(p, DocStat(1, 1, i), p.removesuffix(".md"), [Chunk((), 1, 1, t)]) for i, (p, t) in enumerate(texts.items())])
    near = {"Meaning.md": 1.0, "Both.md": 0.9, "Words.md": -0.5}
    keys = store.keys_in_fill_order()
    titles = store.texts_of(keys)
    rows = []
    for key in keys:
        path = next(p for p in texts if titles[key].startswith(p.removesuffix(".md") + ":"))
        cos = near.get(path, 0.0)
        rows.append([cos, float(np.sqrt(1 - cos * cos)), 0.0, 0.0])
    vectors = VectorStore(tmp_path / "v-vectors-test-v1.sqlite")
    vectors.add(keys, np.asarray(rows, dtype=np.float32))
    choice = Choice(kind="test-fusion-depth")
    question = "zebra quagga"
    meaning._queries[(choice.key, question)] = np.asarray([1.0, 0.0, 0.0, 0.0], dtype=np.float32)
    try:
        covered = _Covered(vectors, choice)
        ranking = hybrid.rank(store, covered, question, lambda _c: True, 1, 1, rerank=False)  # type: ignore[arg-type]
        assert ranking.hybrid and [r.chunk.path for r in ranking.passages] == ["Both.md"]
        top = ranking.passages[0]
        assert (top.bm25_rank, top.meaning_rank) == (2, 2)
        bm25 = hybrid.rank(store, None, question, lambda _c: True, 1, 1, rerank=False)
        assert [r.chunk.path for r in bm25.passages] == ["Words.md"]  # without meaning: BM25's first, one passage
    finally:
        del meaning._queries[(choice.key, question)]
        vectors.close()
        store.close()


QUESTION_WORD = st.sampled_from(sorted(hybrid.QUESTION_WORDS))
ASCII_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", min_size=1, max_size=12)
OTHER_WORD = st.one_of(ASCII_WORD, st.sampled_from(["ログアウトしても", "git-stash", "half-done", "I/O"]))


@given(
    st.lists(
        st.one_of(OTHER_WORD, QUESTION_WORD, QUESTION_WORD.map(str.upper), QUESTION_WORD.map(lambda w: w + "?")), min_size=1, max_size=10
    )
)
def test_bm25_is_asked_the_question_without_its_phrasing_words_and_never_nothing(words: list[str]) -> None:
    asked = hybrid.bm25_words(" ".join(words)).split()
    phrasing = [w.lower().rstrip("?") in hybrid.QUESTION_WORDS for w in words]
    if all(phrasing):
        assert asked == words  # a question of phrasing words alone is asked whole
    else:
        assert asked == [w for w, drop in zip(words, phrasing, strict=True) if not drop]


def test_a_question_phrasing_word_no_longer_outvotes_the_word_that_says_what_it_is_about(tmp_path: Path) -> None:
    """Noise.md shares three of the question's words, each as rare in this vault as "squash"
    (so the chunk index's own rule keeps them); they only phrase the question. Asked whole,
    BM25 put Noise.md first; asked without them, the passage about squashing is first."""
    store = ChunkStore(tmp_path / "v-chunks-v2.sqlite")
    texts = {
        "Noise.md": "you want a way out, any way you want, whatever you need",
        "Squash.md": "squash several commits into one before you push",
        **{f"Filler{i}.md": f"gardening notes number {i}" for i in range(10)},
    }
    store.apply([(p, DocStat(1, 1, i), p.removesuffix(".md"), [Chunk((), 1, 1, t)]) for i, (p, t) in enumerate(texts.items())])
    try:
        ranking = hybrid.rank(store, None, "I want a way to squash, do I need anything?", lambda _c: True, 5, 1, rerank=False)
        assert [r.chunk.path for r in ranking.passages] == ["Squash.md"]
        whole = hybrid.rank(store, None, "want way need", lambda _c: True, 5, 1, rerank=False)
        assert [r.chunk.path for r in whole.passages] == ["Noise.md"]  # phrasing words alone: asked as they are
    finally:
        store.close()
