"""The pure parts of ranking by meaning: what counts as plain words, the passage key and the text
embedded, the int8 vector cache, and answers cut to a byte budget."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from vaultd.api.answer_bytes import fitted
from vaultd.retrieve.chunks import EMBED_CHARS, MAX_TITLE_CHARS, embed_text, passage_key
from vaultd.retrieve.hybrid import is_plain
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
